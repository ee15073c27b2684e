output "primary_endpoint" {
  description = "Host name of the primary (it follows a failover)."
  value       = aws_elasticache_replication_group.this.primary_endpoint_address
}

output "port" {
  description = "Port of the nodes."
  value       = var.port
}

output "security_group_id" {
  description = "Security group of the nodes."
  value       = aws_security_group.this.id
}

output "auth_token" {
  description = "The AUTH token (also in Terraform state)."
  value       = random_password.auth.result
  sensitive   = true
}

output "url" {
  description = "rediss:// URL with the AUTH token, as the chart's Redis Secret holds it."
  value       = "rediss://:${random_password.auth.result}@${aws_elasticache_replication_group.this.primary_endpoint_address}:${var.port}"
  sensitive   = true
}
