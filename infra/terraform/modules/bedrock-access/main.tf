# A Worker runs outside AWS and cannot assume a role (no instance profile, no web identity),
# so the edge signs Bedrock calls with an IAM user's long-lived key (workers/worker/worker-env.ts).
# The user may do nothing but invoke the listed models.
data "aws_partition" "current" {}

data "aws_caller_identity" "current" {}

locals {
  profile_prefix = "^(us|us-gov|eu|apac|jp|au|ca|global)\\."
  partition      = data.aws_partition.current.partition
  account_id     = data.aws_caller_identity.current.account_id

  profiles = [for m in var.models : m if can(regex(local.profile_prefix, m.model_id))]
  direct   = [for m in var.models : m if !can(regex(local.profile_prefix, m.model_id))]

  profile_arns = [
    for m in local.profiles :
    "arn:${local.partition}:bedrock:${m.region}:${local.account_id}:inference-profile/${m.model_id}"
  ]
  # A profile invokes the foundation model in whichever Region it routes the call to.
  profile_routes = [
    for m in local.profiles : {
      model   = replace(m.model_id, "/${local.profile_prefix}/", "")
      regions = startswith(m.model_id, "global.") ? ["*"] : coalesce(m.destination_regions, [m.region])
    }
  ]
  routed_model_arns = flatten([
    for route in local.profile_routes : [
      for region in route.regions : "arn:${local.partition}:bedrock:${region}::foundation-model/${route.model}"
    ]
  ])
  direct_model_arns = [
    for m in local.direct : "arn:${local.partition}:bedrock:${m.region}::foundation-model/${m.model_id}"
  ]
}

data "aws_iam_policy_document" "invoke" {
  statement {
    sid       = "InvokeListedModels"
    effect    = "Allow"
    actions   = ["bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream"]
    resources = distinct(concat(local.profile_arns, local.direct_model_arns, var.application_inference_profile_arns))
  }

  dynamic "statement" {
    for_each = length(local.routed_model_arns) > 0 ? [1] : []
    content {
      sid       = "InvokeModelsBehindProfiles"
      effect    = "Allow"
      actions   = ["bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream"]
      resources = distinct(local.routed_model_arns)
      # Only through one of the listed profiles, not directly.
      condition {
        test     = "StringLike"
        variable = "bedrock:InferenceProfileArn"
        values   = local.profile_arns
      }
    }
  }
}

resource "aws_iam_policy" "invoke" {
  name        = var.name
  description = "Invoke only the Bedrock models Kinference's InferenceProviders name."
  policy      = data.aws_iam_policy_document.invoke.json
  tags        = var.tags
}

resource "aws_iam_user" "edge" {
  name = var.name
  path = "/kinference/"
  tags = var.tags
}

resource "aws_iam_user_policy_attachment" "invoke" {
  user       = aws_iam_user.edge.name
  policy_arn = aws_iam_policy.invoke.arn
}

resource "aws_iam_access_key" "edge" {
  count = var.create_access_key ? 1 : 0
  user  = aws_iam_user.edge.name
}
