#!/usr/bin/env bash
# tests/e2e/test_pyframes_py39.sh — test_pyframes.sh for CPython 3.9 alone (found
# through GP_PYTHONS, PATH or pyenv): its call sites named from its frames;
# skipped (exit 77, never counted as passed) where no 3.9 is found.
exec bash "$(dirname "$0")/test_pyframes.sh" 3.9
