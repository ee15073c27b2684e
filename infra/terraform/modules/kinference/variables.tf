variable "namespace" {
  type        = string
  description = "Namespace of the release and of the Secrets it references."
  default     = "kinference"
}

variable "image" {
  type = object({
    repository  = string
    tag         = string
    pull_policy = optional(string, "IfNotPresent")
  })
  description = "Control-plane image (the repository's Dockerfile). A pinned tag, never latest."

  validation {
    condition     = var.image.tag != "latest" && var.image.tag != ""
    error_message = "Pin the image tag."
  }
}

variable "controller" {
  type = object({
    replicas  = optional(number, 2)
    resources = optional(any, { requests = { cpu = "100m", memory = "256Mi" }, limits = { memory = "512Mi" } })
  })
  description = "Controller replicas and container resources."
  default     = {}
}

variable "scorer" {
  type = object({
    replicas  = optional(number, 2)
    resources = optional(any, { requests = { cpu = "1", memory = "1Gi" }, limits = { memory = "2Gi" } })
    autoscaling = optional(object({
      enabled                        = optional(bool, true)
      min_replicas                   = optional(number, 2)
      max_replicas                   = optional(number, 8)
      target_cpu_utilization_percent = optional(number, 70)
    }), {})
    pdb_min_available                = optional(number, 1)
    termination_grace_period_seconds = optional(number, 150)
    service_port                     = optional(number, 8080)
    # The chart's scorer.tokenizers: files mounted read-only at /tokenizers/<name> (or
    # mount_path) for pools whose tokenizer is a path. One source per entry: a ConfigMap's
    # name, a PersistentVolumeClaim's name (with sub_path for a directory in it), or a
    # directory on the node.
    tokenizers = optional(list(object({
      name                    = string
      mount_path              = optional(string)
      sub_path                = optional(string)
      config_map              = optional(string)
      persistent_volume_claim = optional(string)
      host_path               = optional(string)
    })), [])
  })
  description = "Scorer replicas, resources, autoscaling, disruption budget, drain time, Service port and tokenizer mounts."
  default     = {}

  validation {
    condition = alltrue([
      for t in var.scorer.tokenizers :
      length([for source in [t.config_map, t.persistent_volume_claim, t.host_path] : source if source != null]) == 1
    ])
    error_message = "Each scorer.tokenizers entry takes exactly one of config_map, persistent_volume_claim and host_path."
  }
}

variable "redis_url" {
  type        = string
  description = "rediss:// URL of Valkey including the AUTH token (module redis)."
  sensitive   = true
}

variable "edge_signing_secret" {
  type        = string
  description = "HMAC secret shared with the edge (the same value the Worker gets)."
  sensitive   = true
}

variable "admin_token" {
  type        = string
  description = "Bearer token of the scorer's /admin API."
  sensitive   = true
}

variable "cloudflare" {
  type = object({
    enabled         = bool
    account_id      = optional(string, "")
    kv_namespace_id = optional(string, "")
  })
  description = "Whether the controller also publishes snapshots to the Workers KV namespace the edge binds as CONFIG."
}

variable "cloudflare_api_token" {
  type        = string
  description = "Cloudflare API token with Workers KV Storage: Edit, for the controller's publishing. Null when cloudflare.enabled is false."
  sensitive   = true
  default     = null
}

variable "vllm" {
  type = object({
    namespace      = optional(string, "")
    pod_selector   = optional(map(string), { "kinference.dev/vllm" = "true" })
    http_port      = optional(number, 8000)
    kv_events_port = optional(number, 5557)
    replay_port    = optional(number, 5558)
    # vLLM's --data-parallel-size: rank r binds kv_events_port + r and replay_port + r.
    data_parallel_size = optional(number, 1)
  })
  description = "Where the vLLM pods are, which ports the scorer reaches, and how many data-parallel ranks each pod runs."
  default     = {}
}

variable "network_policy" {
  type = object({
    enabled             = optional(bool, true)
    scorer_ingress_from = optional(any)
  })
  description = "NetworkPolicies, and the peers (NetworkPolicyPeer objects) allowed to call the scorer; null keeps the chart's default."
  default     = {}
}

variable "service_monitor" {
  type = object({
    enabled  = optional(bool, false)
    interval = optional(string, "30s")
  })
  description = "Prometheus Operator ServiceMonitor."
  default     = {}
}
