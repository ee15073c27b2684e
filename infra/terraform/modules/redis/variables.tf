variable "name" {
  type        = string
  description = "Replication group id, also used for the subnet group and security group."
  default     = "kinference"
}

variable "vpc_id" {
  type        = string
  description = "VPC of the cluster."
}

variable "subnet_ids" {
  type        = list(string)
  description = "Private subnets in at least two availability zones."

  validation {
    condition     = length(var.subnet_ids) >= 2
    error_message = "Multi-AZ failover needs subnets in at least two availability zones."
  }
}

variable "allowed_security_group_ids" {
  type        = list(string)
  description = "Security groups allowed to reach the port: the EKS node security group (pods share the node's groups)."
}

variable "engine_version" {
  type        = string
  description = "Valkey major.minor version."
  default     = "8.0"
}

variable "node_type" {
  type        = string
  description = "ElastiCache node type."
  default     = "cache.r7g.large"
}

variable "num_cache_clusters" {
  type        = number
  description = "Nodes in the group (one primary, the rest replicas), spread across the subnets' zones."
  default     = 2

  validation {
    condition     = var.num_cache_clusters >= 2
    error_message = "Automatic failover and Multi-AZ need at least two nodes."
  }
}

variable "port" {
  type        = number
  description = "Port the nodes listen on."
  default     = 6379
}

variable "tags" {
  type        = map(string)
  description = "Tags on every resource."
  default     = {}
}
