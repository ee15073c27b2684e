locals {
  # helm_release reads a local chart relative to the working directory, so anchor it here.
  chart_path = "${path.module}/../../../helm/kinference"

  secret_names = {
    redis      = "kinference-redis"
    signing    = "kinference-edge-signing"
    admin      = "kinference-admin-token"
    cloudflare = "kinference-cloudflare"
  }

  # The chart's values contract (infra/helm/kinference/values.yaml).
  values = {
    image = {
      repository = var.image.repository
      tag        = var.image.tag
      pullPolicy = var.image.pull_policy
    }
    controller = {
      replicas  = var.controller.replicas
      resources = var.controller.resources
    }
    scorer = {
      replicas  = var.scorer.replicas
      resources = var.scorer.resources
      autoscaling = {
        enabled                        = var.scorer.autoscaling.enabled
        minReplicas                    = var.scorer.autoscaling.min_replicas
        maxReplicas                    = var.scorer.autoscaling.max_replicas
        targetCPUUtilizationPercentage = var.scorer.autoscaling.target_cpu_utilization_percent
      }
      podDisruptionBudget           = { minAvailable = var.scorer.pdb_min_available }
      terminationGracePeriodSeconds = var.scorer.termination_grace_period_seconds
      service                       = { port = var.scorer.service_port }
      # Unset attributes are left out, so the chart's defaults (the mount path) apply and
      # its schema, which takes no nulls, sees only what was given.
      tokenizers = [for t in var.scorer.tokenizers : {
        for key, value in {
          name                  = t.name
          mountPath             = t.mount_path
          subPath               = t.sub_path
          configMap             = t.config_map == null ? null : { name = t.config_map }
          persistentVolumeClaim = t.persistent_volume_claim == null ? null : { claimName = t.persistent_volume_claim }
          hostPath              = t.host_path == null ? null : { path = t.host_path }
        } : key => value if value != null
      }]
    }
    secrets = {
      redis              = { name = kubernetes_secret_v1.redis.metadata[0].name, urlKey = "url" }
      edgeSigning        = { name = kubernetes_secret_v1.edge_signing.metadata[0].name, key = "secrets" }
      adminToken         = { name = kubernetes_secret_v1.admin_token.metadata[0].name, key = "token" }
      cloudflareApiToken = { name = local.secret_names.cloudflare, key = "token" }
    }
    cloudflare = {
      enabled       = var.cloudflare.enabled
      accountId     = var.cloudflare.account_id
      kvNamespaceId = var.cloudflare.kv_namespace_id
    }
    vllm = {
      namespace    = var.vllm.namespace
      podSelector  = var.vllm.pod_selector
      httpPort     = var.vllm.http_port
      kvEventsPort = var.vllm.kv_events_port
      replayPort   = var.vllm.replay_port
      # The chart opens replayPort .. + size - 1 (and the same from kvEventsPort).
      dataParallelSize = var.vllm.data_parallel_size
    }
    networkPolicy = merge(
      { enabled = var.network_policy.enabled },
      var.network_policy.scorer_ingress_from == null ? {} : { scorerIngressFrom = var.network_policy.scorer_ingress_from },
    )
    serviceMonitor = {
      enabled  = var.service_monitor.enabled
      interval = var.service_monitor.interval
    }
  }
}

resource "kubernetes_namespace_v1" "this" {
  metadata {
    name = var.namespace
  }
}

# One resource per Secret: for_each cannot iterate over a map holding sensitive values.
resource "kubernetes_secret_v1" "redis" {
  metadata {
    name      = local.secret_names.redis
    namespace = kubernetes_namespace_v1.this.metadata[0].name
  }
  data = { url = var.redis_url }
}

resource "kubernetes_secret_v1" "edge_signing" {
  metadata {
    name      = local.secret_names.signing
    namespace = kubernetes_namespace_v1.this.metadata[0].name
  }
  # Comma-separated in the chart, so a second secret can be added to rotate.
  data = { secrets = var.edge_signing_secret }
}

resource "kubernetes_secret_v1" "admin_token" {
  metadata {
    name      = local.secret_names.admin
    namespace = kubernetes_namespace_v1.this.metadata[0].name
  }
  data = { token = var.admin_token }
}

resource "kubernetes_secret_v1" "cloudflare" {
  count = var.cloudflare.enabled ? 1 : 0

  metadata {
    name      = local.secret_names.cloudflare
    namespace = kubernetes_namespace_v1.this.metadata[0].name
  }
  data = { token = var.cloudflare_api_token }

  lifecycle {
    precondition {
      condition     = var.cloudflare_api_token != null
      error_message = "cloudflare.enabled needs cloudflare_api_token."
    }
  }
}

resource "helm_release" "kinference" {
  name      = "kinference"
  chart     = local.chart_path
  namespace = kubernetes_namespace_v1.this.metadata[0].name
  values    = [yamlencode(local.values)]
  # The scorer drains for its grace period on upgrades; give the rollout time.
  timeout = 900

  depends_on = [kubernetes_secret_v1.cloudflare]
}
