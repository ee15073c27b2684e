output "cluster_name" {
  description = "EKS cluster: aws eks update-kubeconfig --name <this>."
  value       = module.eks_gpu.cluster_name
}

output "gpu_node_labels" {
  description = "nodeSelector for the vLLM pods."
  value       = module.eks_gpu.gpu_node_labels
}

output "redis_endpoint" {
  description = "Valkey primary endpoint."
  value       = module.redis.primary_endpoint
}

output "redis_url" {
  description = "rediss:// URL with the AUTH token (already in the kinference-redis Secret)."
  value       = module.redis.url
  sensitive   = true
}

output "bedrock_policy_json" {
  description = "The edge's Bedrock policy, for review."
  value       = module.bedrock_access.policy_json
}

output "edge_url" {
  description = "Where clients send requests."
  value       = module.edge.edge_url
}

output "kv_namespace_id" {
  description = "Workers KV namespace bound as CONFIG."
  value       = module.edge.kv_namespace_id
}

output "admin_token" {
  description = "Bearer token of the scorer's /admin API."
  value       = random_password.admin_token.result
  sensitive   = true
}

output "kinference_namespace" {
  description = "Namespace of the Kinference release."
  value       = module.kinference.namespace
}
