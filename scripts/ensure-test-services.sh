#!/usr/bin/env bash
# Makes sure what the tests talk to is here: RabbitMQ running on 127.0.0.1:5672, Java for DynamoDB
# Local, Chromium for the dashboard's browser tests, redis-server for the benchmark harness, Python's
# pika for docs/protocol.md's Python worker (which test/e2e/runnable-docs.test.ts runs). Starts
# or installs what is missing when it can (root on Debian); otherwise stops with the exact command
# to run. Tests never skip for lack of them.
set -euo pipefail

AMQP_HOST=127.0.0.1
AMQP_PORT=5672
missing=()

can_apt() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; }
apt_install() {
  echo "installing $* from Debian's packages..." >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" >/dev/null 2>&1 ||
    { apt-get update >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" >/dev/null; }
}
port_open() { (exec 3<>"/dev/tcp/$AMQP_HOST/$AMQP_PORT") 2>/dev/null; }

# RabbitMQ
if ! port_open; then
  if ! command -v rabbitmq-server >/dev/null 2>&1; then
    if can_apt; then apt_install rabbitmq-server; else missing+=("sudo apt-get install -y rabbitmq-server && sudo rabbitmq-server -detached"); fi
  fi
  if command -v rabbitmq-server >/dev/null 2>&1 && ! port_open; then
    echo "starting RabbitMQ (rabbitmq-server -detached)..." >&2
    rabbitmq-server -detached >/dev/null 2>&1 || true
    for _ in $(seq 1 120); do port_open && break; sleep 1; done
    port_open || missing+=("rabbitmq-server -detached   # RabbitMQ did not start within 120 s; see /var/log/rabbitmq")
  fi
fi
# The broker accepts connections a little before it is ready for them.
if port_open && command -v rabbitmqctl >/dev/null 2>&1; then
  timeout 60 rabbitmqctl await_startup >/dev/null 2>&1 || true
fi

# Java 17+ for AWS's DynamoDB Local
if ! command -v java >/dev/null 2>&1; then
  if can_apt; then apt_install openjdk-17-jre-headless; else missing+=("sudo apt-get install -y openjdk-17-jre-headless"); fi
fi

# Chromium for the dashboard's browser tests
if ! command -v chromium >/dev/null 2>&1; then
  if can_apt; then apt_install chromium; else missing+=("sudo apt-get install -y chromium"); fi
fi

# redis-server for the BullMQ side of the benchmark harness (it starts its own, on a free port)
if ! command -v redis-server >/dev/null 2>&1; then
  if can_apt; then apt_install redis-server; else missing+=("sudo apt-get install -y redis-server"); fi
fi

# Python 3 with pika for docs/protocol.md's Python worker: Debian's python3-pika (PyPI is not
# reachable from every machine that runs the tests). It goes to Debian's python3, which the test
# finds when the python3 first on PATH (pyenv's, say) has no pika.
has_pika() { for python in python3 /usr/bin/python3; do "$python" -c 'import pika' >/dev/null 2>&1 && return 0; done; return 1; }
if ! has_pika; then
  if can_apt; then apt_install python3-pika; else missing+=("sudo apt-get install -y python3-pika"); fi
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "The tests need services that are not available. Run:" >&2
  for command in "${missing[@]}"; do echo "  $command" >&2; done
  exit 1
fi
