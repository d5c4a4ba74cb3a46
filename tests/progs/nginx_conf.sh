#!/bin/sh
# nginx_conf.sh DIR PORT ROOT WORKERS: write DIR/nginx.conf for an nginx of
# the tests (soft_programs.bats, tests/soak.sh): in the foreground, WORKERS
# workers serving ROOT on 127.0.0.1:PORT with sendfile and long keep-alive,
# everything it writes under DIR.  nginx clears its workers' environment
# but for what "env" keeps: the preload reads these in the workers.
set -eu
dir=$1 port=$2 root=$3 workers=$4
mkdir -p "$dir"
{
	[ "$(id -u)" -ne 0 ] || echo "user root;"
	cat <<CONF
worker_processes $workers;
daemon off;
env SMC_BACKEND;
env SMC_SOFT_SOCKET;
env SMC_DEBUG;
env LD_PRELOAD;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 1024; }
http {
	access_log off;
	sendfile on;
	tcp_nopush on;
	keepalive_requests 1000000;
	default_type application/octet-stream;
	client_body_temp_path $dir/body;
	proxy_temp_path $dir/proxy;
	fastcgi_temp_path $dir/fastcgi;
	uwsgi_temp_path $dir/uwsgi;
	scgi_temp_path $dir/scgi;
	server {
		listen 127.0.0.1:$port;
		root $root;
	}
}
CONF
} >"$dir/nginx.conf"
