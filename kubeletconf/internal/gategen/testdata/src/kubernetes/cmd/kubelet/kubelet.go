package main

import "k8s.io/kubernetes/cmd/kubelet/app"

func main() { app.NewKubeletCommand() }
