locals {
  # wrangler deploy --dry-run --outdir dist, run at the repository root.
  edge_bundle_path = coalesce(var.edge_bundle_path, "${path.root}/../../../../dist/index.js")
}

# One secret for both ends of the edge-to-scorer signature, one for the scorer's /admin.
resource "random_password" "edge_signing" {
  length  = 48
  special = false
}

resource "random_password" "admin_token" {
  length  = 48
  special = false
}

module "eks_gpu" {
  source = "../../modules/eks-gpu"

  name                         = var.name
  kubernetes_version           = var.kubernetes_version
  vpc_id                       = module.vpc.vpc_id
  subnet_ids                   = module.vpc.private_subnets
  control_plane_subnet_ids     = module.vpc.intra_subnets
  endpoint_public_access_cidrs = var.api_allowed_cidrs
  gpu_instance_types           = var.gpu_instance_types
  gpu_node_count               = var.gpu_node_count
  tags                         = var.tags
}

module "redis" {
  source = "../../modules/redis"

  name                       = var.name
  vpc_id                     = module.vpc.vpc_id
  subnet_ids                 = module.vpc.private_subnets
  allowed_security_group_ids = [module.eks_gpu.node_security_group_id]
  tags                       = var.tags
}

module "bedrock_access" {
  source = "../../modules/bedrock-access"

  name   = "${var.name}-edge-bedrock"
  models = var.bedrock_models
  tags   = var.tags
}

module "edge" {
  source = "../../modules/edge-cloudflare"

  account_id            = var.cloudflare_account_id
  zone_id               = var.cloudflare_zone_id
  hostname              = var.edge_hostname
  bundle_path           = local.edge_bundle_path
  scorer_url            = var.scorer_public_url
  signing_secret        = random_password.edge_signing.result
  aws_access_key_id     = module.bedrock_access.access_key_id
  aws_secret_access_key = module.bedrock_access.secret_access_key
}

module "kinference" {
  source = "../../modules/kinference"

  image               = var.image
  redis_url           = module.redis.url
  edge_signing_secret = random_password.edge_signing.result
  admin_token         = random_password.admin_token.result

  cloudflare = {
    enabled         = true
    account_id      = var.cloudflare_account_id
    kv_namespace_id = module.edge.kv_namespace_id
  }
  cloudflare_api_token = var.controller_cloudflare_api_token

  network_policy = {
    enabled             = true
    scorer_ingress_from = var.scorer_ingress_from
  }
  service_monitor = { enabled = var.service_monitor_enabled }
  scorer          = { tokenizers = var.scorer_model_files }

  depends_on = [module.eks_gpu]
}
