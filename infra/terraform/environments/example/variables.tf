variable "name" {
  type        = string
  description = "Name of the deployment: the cluster, VPC, Valkey group and IAM user are named after it."
  default     = "kinference"
}

variable "region" {
  type        = string
  description = "AWS region of the cluster, Valkey and (by default) Bedrock."
}

variable "vpc_cidr" {
  type        = string
  description = "CIDR block of the VPC."
  default     = "10.40.0.0/16"
}

variable "kubernetes_version" {
  type        = string
  description = "EKS Kubernetes version."
  default     = "1.33"
}

variable "api_allowed_cidrs" {
  type        = list(string)
  description = "CIDR blocks allowed to reach the public EKS API endpoint (your office, CI)."
}

variable "gpu_instance_types" {
  type        = list(string)
  description = "g6e instance types of the GPU node group."
  default     = ["g6e.2xlarge"]
}

variable "gpu_node_count" {
  type        = object({ min = number, max = number, desired = number })
  description = "Size of the GPU node group."
  default     = { min = 1, max = 4, desired = 2 }
}

variable "bedrock_models" {
  type = list(object({
    model_id            = string
    region              = string
    destination_regions = optional(list(string))
  }))
  description = "The InferenceProviders' models (spec.models[].modelId, spec.bedrock.region) the edge may invoke."
}

variable "cloudflare_api_token" {
  type        = string
  description = "Cloudflare token Terraform deploys with (Workers Scripts, Workers KV Storage and Workers Routes: Edit)."
  sensitive   = true
}

variable "controller_cloudflare_api_token" {
  type        = string
  description = "Narrower Cloudflare token for the controller: Workers KV Storage: Edit only."
  sensitive   = true
}

variable "cloudflare_account_id" {
  type        = string
  description = "Cloudflare account of the edge."
}

variable "cloudflare_zone_id" {
  type        = string
  description = "Zone of edge_hostname."
}

variable "edge_hostname" {
  type        = string
  description = "Custom domain the edge answers on, e.g. api.example.com."
}

variable "edge_bundle_path" {
  type        = string
  description = "The Worker's main module as `wrangler deploy --dry-run --outdir dist` writes it; null for dist/index.js at the repository root."
  default     = null
}

variable "scorer_public_url" {
  type        = string
  description = "How the edge reaches the scorer: the ingress or Cloudflare Tunnel hostname in front of the scorer Service."
}

variable "scorer_ingress_from" {
  type        = any
  description = "NetworkPolicyPeer objects allowed to call the scorer (the ingress controller or tunnel connector pods)."
  default     = null
}

# Not "scorer_tokenizers": npm run check:terraform takes a variable with "token" in its name
# for a secret.
variable "scorer_model_files" {
  type        = any
  description = "Tokenizer files mounted into the scorer's pods for pools whose tokenizer is a path: the kinference module's scorer.tokenizers (name, one of config_map, persistent_volume_claim or host_path, optional sub_path and mount_path)."
  default     = []
}

variable "image" {
  type        = object({ repository = string, tag = string, pull_policy = optional(string, "IfNotPresent") })
  description = "Control-plane image built from the repository's Dockerfile."
}

variable "service_monitor_enabled" {
  type        = bool
  description = "Create a ServiceMonitor (needs the Prometheus Operator)."
  default     = false
}

variable "tags" {
  type        = map(string)
  description = "Tags on every AWS resource."
  default     = { project = "kinference" }
}
