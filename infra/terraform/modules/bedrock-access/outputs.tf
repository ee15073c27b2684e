output "policy_arn" {
  description = "ARN of the invoke-only policy (attach it to a Pod Identity role if a pod ever calls Bedrock)."
  value       = aws_iam_policy.invoke.arn
}

output "policy_json" {
  description = "The policy document, for review."
  value       = data.aws_iam_policy_document.invoke.json
}

output "user_name" {
  description = "Name of the IAM user the edge calls Bedrock as."
  value       = aws_iam_user.edge.name
}

output "access_key_id" {
  description = "The user's access key id, or null when create_access_key is false."
  value       = one(aws_iam_access_key.edge[*].id)
  sensitive   = true
}

output "secret_access_key" {
  description = "The user's secret access key (also in Terraform state), or null when create_access_key is false."
  value       = one(aws_iam_access_key.edge[*].secret)
  sensitive   = true
}
