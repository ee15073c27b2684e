output "cluster_name" {
  description = "Name of the EKS cluster."
  value       = module.eks.cluster_name
}

output "cluster_endpoint" {
  description = "API server endpoint."
  value       = module.eks.cluster_endpoint
}

output "cluster_certificate_authority_data" {
  description = "Base64 CA certificate of the API server."
  value       = module.eks.cluster_certificate_authority_data
}

output "node_security_group_id" {
  description = "Security group the nodes (and so the pods) share; Redis allows it."
  value       = module.eks.node_security_group_id
}

output "gpu_node_labels" {
  description = "Labels of the GPU nodes, for the vLLM pods' nodeSelector."
  value       = local.gpu_labels
}

output "gpu_toleration" {
  description = "The toleration vLLM pods need for the GPU nodes' taint."
  value       = { key = "nvidia.com/gpu", operator = "Equal", value = "true", effect = "NoSchedule" }
}
