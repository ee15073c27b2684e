output "namespace" {
  description = "Namespace of the release."
  value       = helm_release.kinference.namespace
}

output "release_name" {
  description = "Name of the Helm release."
  value       = helm_release.kinference.name
}

output "secret_names" {
  description = "Names of the Secrets the chart references."
  value       = local.secret_names
}
