#!/usr/bin/env bash
# Issue #10 class 2: subcommand deny rules see through global options and
# inline aliases. Each program is allowed (Bash(git:*), …) and one of its
# subcommands denied (Bash(git push:*), …); the model runs the denied
# subcommand behind the program's global options (git -C/-c/--git-dir/
# --no-pager, npm --prefix, docker -H/--context, kubectl -n/--context,
# cargo +nightly --locked, make -C, terraform -chdir=, helm -n) or through
# an inline alias (git -c alias.pp=push pp, --config-env). In default and
# bypassPermissions mode every call is denied by the deny rule, and the
# fake programs on PATH never see the denied subcommand; allowed
# subcommands behind the same options still run.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_rules_lib.sh"

fake_progs git npm pnpm docker kubectl cargo make terraform helm
mkdir -p "$T/proj"
cat > "$LOOM_HOME/settings.json" <<'JSON'
{"permissions": {
  "allow": ["Bash(git:*)", "Bash(npm:*)", "Bash(pnpm:*)", "Bash(docker:*)", "Bash(kubectl:*)",
            "Bash(cargo:*)", "Bash(make:*)", "Bash(terraform:*)", "Bash(helm:*)"],
  "deny": ["Bash(git push:*)", "Bash(npm publish:*)", "Bash(pnpm publish:*)",
           "Bash(docker run:*)", "Bash(kubectl delete:*)", "Bash(cargo publish:*)",
           "Bash(make deploy)", "Bash(terraform destroy:*)", "Bash(helm uninstall:*)"]}}
JSON
DENIED=(
  'git -C . push'
  'git -c k=v push origin main'
  'git --git-dir=.git push'
  'git --git-dir .git --work-tree . push'
  'git --no-pager push'
  'git -p --no-optional-locks push'
  'git -c alias.pp=push pp'
  'git --config-env=alias.pp=PP pp'
  'git -c core.pager=true --bare push'
  'git --an-unknown-option push'
  'npm --prefix x publish'
  'npm --registry=http://127.0.0.1:9 -g publish'
  'pnpm -C pkg --filter app publish'
  'docker -H tcp://127.0.0.1:2375 --context y run alpine'
  'docker --context=y -D run alpine'
  'kubectl -n ns --context c delete pod x'
  'kubectl --kubeconfig=k -v 9 delete pod x'
  'cargo +nightly --locked publish'
  'cargo -q --offline publish'
  'make -C sub deploy'
  'make -j 4 V=1 deploy'
  'terraform -chdir=infra destroy'
  'helm -n prod --kube-context c uninstall app'
  'sudo -n git -C . push'
  'env X=1 git --no-pager push'
)
ALLOWED=('git -C . status' 'kubectl -n ns get pods' 'make -C sub build')
bash_calls_scenario "$T/scenario.json" "${DENIED[@]}" "${ALLOWED[@]}"
for mode in default bypassPermissions; do
  : > "$T/ran.log"
  start_mock "$T/scenario.json"
  use_provider anthropic
  run_calls "$mode" "$T/proj"
  for i in "${!DENIED[@]}"; do
    assert_contains "$mode: [${DENIED[$i]}] denied by a deny rule" "$(call_result "c$i")" \
      "denied by settings rule"
  done
  check "$mode: no denied subcommand ran" \
    bash -c "! grep -Eq 'push|publish| run |delete|deploy|destroy|uninstall| pp' '$T/ran.log'"
  check "$mode: git -C . status ran" grep -q "^git -C . status" "$T/ran.log"
  check "$mode: kubectl get ran" grep -q "^kubectl -n ns get pods" "$T/ran.log"
  check "$mode: make build ran" grep -q "^make -C sub build" "$T/ran.log"
done
finish
