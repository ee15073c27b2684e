provider "aws" {
  region = var.region
}

provider "cloudflare" {
  api_token = var.cloudflare_api_token
}

# Both read the cluster this configuration creates; a first apply may need
# -target=module.eks_gpu.module.eks before the in-cluster parts (README.md).
provider "helm" {
  kubernetes = {
    host                   = module.eks_gpu.cluster_endpoint
    cluster_ca_certificate = base64decode(module.eks_gpu.cluster_certificate_authority_data)
    exec = {
      api_version = "client.authentication.k8s.io/v1beta1"
      command     = "aws"
      args        = ["eks", "get-token", "--cluster-name", module.eks_gpu.cluster_name, "--region", var.region]
    }
  }
}

provider "kubernetes" {
  host                   = module.eks_gpu.cluster_endpoint
  cluster_ca_certificate = base64decode(module.eks_gpu.cluster_certificate_authority_data)
  exec {
    api_version = "client.authentication.k8s.io/v1beta1"
    command     = "aws"
    args        = ["eks", "get-token", "--cluster-name", module.eks_gpu.cluster_name, "--region", var.region]
  }
}
