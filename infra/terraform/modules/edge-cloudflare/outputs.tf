output "kv_namespace_id" {
  description = "Id of the KV namespace bound as CONFIG; the controller publishes snapshots there."
  value       = cloudflare_workers_kv_namespace.config.id
}

output "script_name" {
  description = "Name of the uploaded Worker script."
  value       = cloudflare_workers_script.edge.script_name
}

output "edge_url" {
  description = "URL of the edge on the custom domain, or null without one."
  value       = var.hostname == null ? null : "https://${var.hostname}"
}
