variable "name" {
  type        = string
  description = "Name of the IAM user and policy the edge uses for Bedrock."
  default     = "kinference-edge-bedrock"
}

variable "models" {
  type = list(object({
    model_id            = string
    region              = string
    destination_regions = optional(list(string))
  }))
  description = <<-EOT
    The models the InferenceProviders name: spec.models[].modelId with spec.bedrock.region.
    An id with a geographic prefix (us., eu., apac., ...) is a system inference profile; the
    foundation model behind it is allowed in each of destination_regions (the Regions the
    profile routes to; default: the profile's own region). A "global." profile may route to
    any commercial Region, so its foundation model is allowed in every Region.
  EOT

  validation {
    condition     = length(var.models) > 0
    error_message = "List at least one model."
  }
}

variable "application_inference_profile_arns" {
  type        = list(string)
  description = "Application inference profiles (arn:aws:bedrock:REGION:ACCOUNT:application-inference-profile/ID) the edge may invoke."
  default     = []
}

variable "create_access_key" {
  type        = bool
  description = "Create the user's access key here (it then lands in Terraform state) instead of out of band."
  default     = true
}

variable "tags" {
  type        = map(string)
  description = "Tags on the IAM user and policy."
  default     = {}
}
