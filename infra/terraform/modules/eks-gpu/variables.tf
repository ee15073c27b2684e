variable "name" {
  type        = string
  description = "Name of the EKS cluster."
}

variable "kubernetes_version" {
  type        = string
  description = "Kubernetes version of the control plane and nodes."
  default     = "1.33"
}

variable "vpc_id" {
  type        = string
  description = "VPC of the cluster."
}

variable "subnet_ids" {
  type        = list(string)
  description = "Private subnets for the nodes. g6e is not offered in every zone: pick subnets in zones that have it."
}

variable "control_plane_subnet_ids" {
  type        = list(string)
  description = "Subnets for the control plane's network interfaces (e.g. the VPC's intra subnets)."
}

variable "endpoint_public_access" {
  type        = bool
  description = "Expose the API server endpoint publicly (restricted to endpoint_public_access_cidrs)."
  default     = true
}

variable "endpoint_public_access_cidrs" {
  type        = list(string)
  description = "CIDR blocks allowed to reach the public API endpoint (no default: the EKS default is the whole internet)."
}

variable "system_instance_types" {
  type        = list(string)
  description = "Instance types of the node group for the control plane pods (controller, scorer, CoreDNS)."
  default     = ["m7i.xlarge"]
}

variable "system_node_count" {
  type        = object({ min = number, max = number, desired = number })
  description = "Size of the system node group."
  default     = { min = 2, max = 4, desired = 2 }
}

variable "gpu_instance_types" {
  type        = list(string)
  description = "g6e (NVIDIA L40S) instance types of the GPU node group."
  default     = ["g6e.2xlarge"]

  validation {
    condition     = length(var.gpu_instance_types) > 0 && alltrue([for t in var.gpu_instance_types : startswith(t, "g6e.")])
    error_message = "The GPU node group runs g6e (L40S) instances only."
  }
}

variable "gpu_node_count" {
  type        = object({ min = number, max = number, desired = number })
  description = "Size of the GPU node group (desired is only read at creation)."
  default     = { min = 1, max = 4, desired = 2 }
}

variable "gpu_disk_size_gib" {
  type        = number
  description = "Root volume of the GPU nodes: vLLM images and model weights are large."
  default     = 300
}

variable "nvidia_device_plugin_version" {
  type        = string
  description = "Version of NVIDIA's nvidia-device-plugin Helm chart (the AL2023 NVIDIA AMI needs the plugin)."
  default     = "0.17.1"
}

variable "tags" {
  type        = map(string)
  description = "Tags on every resource."
  default     = {}
}
