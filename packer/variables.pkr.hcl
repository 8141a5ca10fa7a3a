# Variables of the eksboot node image. Every one has a default that builds an image
# from the newest EKS-optimized Amazon Linux 2023 AMI of Kubernetes 1.35; set them with
# -var name=value or a *.pkrvars.hcl file (see README.md).

variable "region" {
  type        = string
  default     = "us-west-2"
  description = "AWS region to build the AMI in (the AMI is registered there)."
}

variable "image_family" {
  type        = string
  default     = "al2023"
  description = "Family of the source EKS AMI: al2023 (Amazon Linux 2023, configured by nodeadm, whose bootstrap.sh is a stub) or al2 (Amazon Linux 2, published up to Kubernetes 1.32). The local source lays out a root of that family."

  validation {
    condition     = contains(["al2023", "al2"], var.image_family)
    error_message = "The image_family must be al2023 or al2."
  }
}

variable "kubernetes_version" {
  type        = string
  default     = "1.35"
  description = "Kubernetes minor version of the source EKS AMI (its kubelet), e.g. 1.34."

  validation {
    condition     = length(split(".", var.kubernetes_version)) == 2 && substr(var.kubernetes_version, 0, 2) == "1."
    error_message = "The kubernetes_version must be a minor version such as 1.32."
  }
}

variable "source_ami_name" {
  type        = string
  default     = ""
  description = "Name filter of the source AMI; empty means the EKS-optimized image of image_family, kubernetes_version and architecture."
}

variable "source_ami_owners" {
  type        = list(string)
  default     = ["602401143452"]
  description = "Accounts that own the source AMI (602401143452 publishes the EKS-optimized AMIs in most commercial regions)."
}

variable "architecture" {
  type        = string
  default     = "x86_64"
  description = "CPU architecture of the source AMI: x86_64 or arm64 (build eksboot with the matching GOARCH)."

  validation {
    condition     = contains(["x86_64", "arm64"], var.architecture)
    error_message = "The architecture must be x86_64 or arm64."
  }
}

variable "instance_type" {
  type        = string
  default     = "m5.large"
  description = "Instance type of the temporary build instance (its architecture must match)."
}

variable "ssh_username" {
  type        = string
  default     = "ec2-user"
  description = "Login user of the source AMI."
}

variable "ami_name" {
  type        = string
  default     = ""
  description = "Name of the new AMI; empty means eksboot-eks-node-<image_family>-<kubernetes_version>-<architecture>-<UTC time>."
}

variable "eksboot_rpm" {
  type        = string
  default     = ""
  description = "The eksboot RPM to install, of the image's architecture: make package writes dist/eksboot-VERSION-1.x86_64.rpm and dist/eksboot-VERSION-1.aarch64.rpm (make ami and make packer-validate build and pass the one of GOARCH)."
}

variable "eksboot_version" {
  type        = string
  default     = "dev"
  description = "eksboot version recorded in the AMI's tags (make ami passes tools/release's, which the RPM carries)."
}

variable "staging_dir" {
  type        = string
  default     = ""
  description = "Local source only: the folder that stands for / (it must exist and be empty: the build lays out a stand-in image of image_family in it, then installs the RPM into it with rpm --root, as root)."
}

variable "kubelet_version" {
  type        = string
  default     = ""
  description = "Local source only: the version the stand-in image's kubelet reports (e.g. v1.35.0-eks-4a1b2c3); empty means v<kubernetes_version>.0."
}
