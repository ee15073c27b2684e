# Cluster mode disabled: the scorer's KV index and the snapshot store use multi-key
# commands and Lua (control-plane/config-store/config-store-lua.ts), which cluster mode
# would force into one hash slot.
resource "random_password" "auth" {
  # Letters and digits only: 16 to 128 printable characters are allowed, and this keeps the
  # rediss:// URL free of characters that would need escaping.
  length  = 64
  special = false
}

resource "aws_elasticache_subnet_group" "this" {
  name        = var.name
  description = "Kinference Valkey subnets"
  subnet_ids  = var.subnet_ids
  tags        = var.tags
}

resource "aws_security_group" "this" {
  name        = "${var.name}-valkey"
  description = "Kinference Valkey: reachable from the EKS nodes only"
  vpc_id      = var.vpc_id
  tags        = var.tags
}

resource "aws_vpc_security_group_ingress_rule" "clients" {
  for_each = toset(var.allowed_security_group_ids)

  security_group_id            = aws_security_group.this.id
  referenced_security_group_id = each.value
  ip_protocol                  = "tcp"
  from_port                    = var.port
  to_port                      = var.port
  description                  = "Valkey from ${each.value}"
}

resource "aws_elasticache_replication_group" "this" {
  replication_group_id = var.name
  description          = "Kinference snapshots, KV index and quota state"
  engine               = "valkey"
  engine_version       = var.engine_version
  node_type            = var.node_type
  port                 = var.port
  num_cache_clusters   = var.num_cache_clusters
  subnet_group_name    = aws_elasticache_subnet_group.this.name
  security_group_ids   = [aws_security_group.this.id]

  automatic_failover_enabled = true
  multi_az_enabled           = true
  at_rest_encryption_enabled = true
  transit_encryption_enabled = true
  auth_token                 = random_password.auth.result
  auth_token_update_strategy = "ROTATE"

  apply_immediately          = false
  auto_minor_version_upgrade = true
  snapshot_retention_limit   = 1
  tags                       = var.tags
}
