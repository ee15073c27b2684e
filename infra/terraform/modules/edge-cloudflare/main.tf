# Terraform owns the Worker script as well as the KV namespace and the domain: the v5
# provider has no standalone Worker secret resource, so the only way for Terraform to
# hand the Bedrock key and the signing secret to the Worker is as bindings of the script
# it uploads. wrangler only builds the bundle. README.md explains the trade-off.
locals {
  # Must match wrangler.toml (the offline checker compares them).
  compatibility_date  = "2026-11-01"
  compatibility_flags = ["nodejs_compat"]
  config_binding      = "CONFIG"
  quota_binding       = "QUOTA_LEDGER"
  quota_class         = "QuotaLedgerObject"
  migration_tag       = "v1"
}

resource "cloudflare_workers_kv_namespace" "config" {
  account_id = var.account_id
  title      = var.kv_namespace_title
}

resource "cloudflare_workers_script" "edge" {
  account_id          = var.account_id
  script_name         = var.script_name
  main_module         = var.main_module
  content_file        = var.bundle_path
  content_sha256      = filesha256(var.bundle_path)
  compatibility_date  = local.compatibility_date
  compatibility_flags = local.compatibility_flags

  bindings = [
    { type = "kv_namespace", name = local.config_binding, namespace_id = cloudflare_workers_kv_namespace.config.id },
    { type = "durable_object_namespace", name = local.quota_binding, class_name = local.quota_class },
    { type = "plain_text", name = "SCORER_URL", text = var.scorer_url },
    { type = "plain_text", name = "CONFIG_CACHE_SECONDS", text = tostring(var.config_cache_seconds) },
    { type = "secret_text", name = "KINFERENCE_SIGNING_SECRET", text = var.signing_secret },
    { type = "secret_text", name = "AWS_ACCESS_KEY_ID", text = var.aws_access_key_id },
    { type = "secret_text", name = "AWS_SECRET_ACCESS_KEY", text = var.aws_secret_access_key },
  ]

  # SQLite-backed class, as wrangler.toml declares it: new accounts refuse KV-backed ones.
  migrations = {
    new_tag            = local.migration_tag
    new_sqlite_classes = [local.quota_class]
  }

  observability = {
    enabled = true
  }
}

resource "cloudflare_workers_custom_domain" "edge" {
  count = var.hostname == null ? 0 : 1

  account_id = var.account_id
  zone_id    = var.zone_id
  hostname   = var.hostname
  service    = cloudflare_workers_script.edge.script_name

  lifecycle {
    precondition {
      condition     = var.zone_id != null
      error_message = "A custom domain needs zone_id."
    }
  }
}

resource "cloudflare_workers_route" "edge" {
  for_each = toset(var.route_patterns)

  zone_id = var.zone_id
  pattern = each.value
  script  = cloudflare_workers_script.edge.id

  lifecycle {
    precondition {
      condition     = var.zone_id != null
      error_message = "Routes need zone_id."
    }
  }
}
