#!/usr/bin/env bash
# calc.sh — a tiny calculator library for Loom's demo. It has a bug.

add() {
  echo $(( $1 - $2 ))
}

mul() {
  echo $(( $1 * $2 ))
}
