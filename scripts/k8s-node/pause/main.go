// Command pause is the sandbox ("pause") container of fraudstream's local Kubernetes node.
//
// It is PID 1 of every pod: it holds the pod's namespaces open while the pod's containers come and go. It sleeps
// until SIGINT or SIGTERM (then exits 0), and reaps every child that exits, as an init must when the pod shares
// one PID namespace among its containers. Built statically (CGO_ENABLED=0) by `scripts/provision.sh k8s-node`;
// the image around it is written by fraudstream_localstack.oci.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-v" {
		fmt.Println("fraudstream pause")
		return
	}
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "pause: warning: not running as PID 1")
	}
	signals := make(chan os.Signal, 16)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig == syscall.SIGCHLD {
			reapAll()
			continue
		}
		fmt.Fprintf(os.Stderr, "pause: shutting down on %v\n", sig)
		os.Exit(0)
	}
}

// reapAll collects every exited child without blocking: one SIGCHLD may stand for several exits.
func reapAll() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
