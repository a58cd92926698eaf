// Command probe is the local node's test tool, in an image of its own (the node has no registry to pull a busybox
// from). k8s-up's smoke check and the tests use it to show that Services, kube-proxy and cluster DNS work:
//
//	probe serve [-port 8080]                       HTTP server; GET / answers with the host (pod) name
//	probe get [-timeout 5s] URL                    resolves the URL's host and fetches it, retrying until the
//	                                               deadline (DNS and Service rules may lag a new Service); prints the body
//	probe resolve [-server IP:53] [-timeout 5s] NAME   prints the addresses of NAME, asking -server if given
//	probe write PATH TEXT                          writes TEXT and a newline to PATH (a file on a volume), reads it back
//
// get, resolve and write exit 0 on success and 1 on any failure, saying why on stderr.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fail("usage: probe serve|get|resolve|write ...")
	}
	cmd, args := os.Args[1], os.Args[2:]
	switch cmd {
	case "serve":
		serve(args)
	case "get":
		get(args)
	case "resolve":
		resolve(args)
	case "write":
		write(args)
	default:
		fail("unknown command " + cmd)
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "probe:", msg)
	os.Exit(1)
}

func serve(args []string) {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	port := fs.Int("port", 8080, "TCP port to listen on")
	_ = fs.Parse(args)
	host, _ := os.Hostname()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, host) })
	srv := &http.Server{Addr: fmt.Sprintf(":%d", *port), Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		stop := make(chan os.Signal, 1)
		signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
		<-stop
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}()
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		fail(err.Error())
	}
}

func get(args []string) {
	fs := flag.NewFlagSet("get", flag.ExitOnError)
	timeout := fs.Duration("timeout", 5*time.Second, "overall deadline")
	_ = fs.Parse(args)
	if fs.NArg() != 1 {
		fail("usage: probe get [-timeout 5s] URL")
	}
	deadline := time.Now().Add(*timeout)
	client := &http.Client{Timeout: 3 * time.Second}
	for {
		body, err := fetch(client, fs.Arg(0))
		if err == nil {
			os.Stdout.Write(body)
			return
		}
		if time.Now().After(deadline) {
			fail(err.Error())
		}
		fmt.Fprintln(os.Stderr, "probe: retrying:", err)
		time.Sleep(500 * time.Millisecond)
	}
}

func fetch(client *http.Client, url string) ([]byte, error) {
	resp, err := client.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %d", url, resp.StatusCode)
	}
	return body, nil
}

func resolve(args []string) {
	fs := flag.NewFlagSet("resolve", flag.ExitOnError)
	server := fs.String("server", "", "DNS server host:port (default: /etc/resolv.conf)")
	timeout := fs.Duration("timeout", 5*time.Second, "overall deadline")
	_ = fs.Parse(args)
	if fs.NArg() != 1 {
		fail("usage: probe resolve [-server IP:53] [-timeout 5s] NAME")
	}
	resolver := &net.Resolver{PreferGo: true}
	if *server != "" {
		resolver.Dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, *server)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	addrs, err := resolver.LookupHost(ctx, fs.Arg(0))
	if err != nil {
		fail(err.Error())
	}
	for _, a := range addrs {
		fmt.Println(a)
	}
}

func write(args []string) {
	if len(args) != 2 {
		fail("usage: probe write PATH TEXT")
	}
	want := args[1] + "\n"
	if err := os.WriteFile(args[0], []byte(want), 0o644); err != nil {
		fail(err.Error())
	}
	got, err := os.ReadFile(args[0])
	if err != nil {
		fail(err.Error())
	}
	if string(got) != want {
		fail(fmt.Sprintf("%s: read back %q, wrote %q", args[0], got, want))
	}
	fmt.Print(want)
}
