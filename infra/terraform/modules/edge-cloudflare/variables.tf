variable "account_id" {
  type        = string
  description = "Cloudflare account that owns the Worker and the KV namespace."
}

variable "script_name" {
  type        = string
  description = "Name of the Worker script (wrangler.toml's name)."
  default     = "kinference-edge"
}

variable "bundle_path" {
  type        = string
  description = "Path of the main module wrangler built with `wrangler deploy --dry-run --outdir dist` (e.g. dist/index.js). It must exist at plan time."
}

variable "main_module" {
  type        = string
  description = "File name of the main module inside the bundle, as wrangler names it."
  default     = "index.js"
}

variable "kv_namespace_title" {
  type        = string
  description = "Title of the Workers KV namespace holding the config snapshot (bound as CONFIG)."
  default     = "kinference-config"
}

variable "zone_id" {
  type        = string
  description = "Zone of the custom domain and routes. Null to publish on workers.dev only."
  default     = null
}

variable "hostname" {
  type        = string
  description = "Custom domain the edge answers on (e.g. api.example.com). Null for none."
  default     = null
}

variable "route_patterns" {
  type        = list(string)
  description = "Extra Worker routes (e.g. example.com/v1/*) in zone_id, beside or instead of the custom domain."
  default     = []
}

variable "scorer_url" {
  type        = string
  description = "The in-cluster scorer as reachable from Cloudflare (a tunnel or a public ingress), https://..."

  validation {
    condition     = can(regex("^https?://", var.scorer_url))
    error_message = "scorer_url must be an http(s) URL."
  }
}

variable "signing_secret" {
  type        = string
  description = "HMAC secret the edge signs scorer requests with (the scorer holds the same one)."
  sensitive   = true

  validation {
    condition     = length(var.signing_secret) >= 16
    error_message = "signing_secret needs at least 16 characters (workers/worker/worker-env.ts)."
  }
}

variable "aws_access_key_id" {
  type        = string
  description = "Access key id of the IAM user the edge calls Bedrock as (module bedrock-access)."
  sensitive   = true
}

variable "aws_secret_access_key" {
  type        = string
  description = "Secret access key of that IAM user."
  sensitive   = true
}

variable "config_cache_seconds" {
  type        = number
  description = "How long an isolate reuses the snapshot it read from KV (CONFIG_CACHE_SECONDS)."
  default     = 30
}
