#!/usr/bin/env bash
# Edit/Write deny rules bind Bash: with Edit(.env) and Write(secrets/**)
# denied and Bash allowed, every spelling of a command that would change,
# replace or delete .env (or a file under secrets/) is denied before it runs
# — in the default mode and in bypassPermissions, where the deny rule is the
# only fence. Writers Loom knows (rm, shred, sort -o, uniq IN OUT, find
# -fprint/-delete, sed w / -i, curl -o, wget -O, patch, dd of=, cp, mv, ln,
# install, tee, truncate, tar -x, gzip), brace-expanded and globbed targets
# (a glob that could be the file counts as the file), writers whose targets
# the command line does not name (xargs rm, find -delete, git clean, tar -x
# without members, a recursive copy: "any file here"), links to the file,
# and a writer Loom does not know pointed at the file. A harmless command next to
# them still runs, so the denials are not a blanket refusal.
source "$(dirname "$0")/_lib.sh"

P="$T/proj"
mkdir -p "$P/secrets" "$LOOM_HOME"
cat > "$LOOM_HOME/settings.json" <<'JSON'
{"permissions": {"allow": ["Bash"], "deny": ["Edit(.env)", "Write(secrets/**)"]}}
JSON

# Each line: an id, a tab, the command. Every one would change .env or
# secrets/key if it ran.
cat > "$T/commands.tsv" <<'TSV'
w01	rm .env
w02	rm -f -- ./.env
w03	shred -u .env
w04	sort -o .env in.txt
w05	sort --output=.env in.txt
w06	uniq in.txt .env
w07	find . -maxdepth 1 -name in.txt -fprint .env
w08	find . -name .env -delete
w09	sed -n 'w .env' in.txt
w10	sed -i s/SECRET/leaked/ .env
w11	perl -pi -e s/SECRET/leaked/ .env
w12	curl -s -o .env file:///etc/hostname
w13	wget -q -O .env http://127.0.0.1:9/
w14	patch .env < fix.diff
w15	dd if=in.txt of=.env
w16	cp in.txt .env
w17	mv in.txt .env
w18	ln -sf in.txt .env
w19	install -m 600 in.txt .env
w20	tee .env < in.txt
w21	cp in.txt {.env,}
w22	echo leaked > {.env,}
w23	truncate -s 0 .env
w24	tar -xf evil.tar .env
w25	gzip .env
w26	./clobber .env
w27	python3 -c "open('.env','w').write('leaked')"
w28	cat in.txt > .env
w29	sudo -n cp in.txt .env
w30	cp in.txt secrets/key
w31	rm secrets/key
w32	echo leaked | tee -a secrets/key
w33	rm .en?
w34	cp in.txt .e*
w35	echo leaked > .en[v]
w36	shred -u secrets/k*
w37	echo .env | xargs rm
w38	find . -delete
w39	git clean -fdx
w40	tar -xf evil.tar
w41	ln .env hard && echo leaked > hard
w42	cp -r tpl/. .
TSV

scenario() {
  jq -Rn '
    [inputs | split("\t") | {id: .[0], name: "Bash", input: {command: .[1]}}] as $calls
    | {turns: [
        {reply: {tool_calls: ($calls + [{id: "ok1", name: "Bash", input: {command: "cp in.txt copy.txt"}}])}},
        {reply: {text: "Done trying."}}]}' < "$T/commands.tsv" > "$T/scenario.json"
}
scenario

setup_files() {
  rm -rf "$P"/* "$P"/.env "$P"/.env.gz
  mkdir -p "$P/secrets"
  printf 'API_KEY=SECRET\n' > "$P/.env"
  printf 'key material\n' > "$P/secrets/key"
  printf 'leaked\n' > "$P/in.txt"
  cat > "$P/clobber" <<'SH'
#!/bin/sh
# A writer Loom has never heard of.
echo leaked > "$1"
SH
  chmod +x "$P/clobber"
  mkdir -p "$P/tpl" && printf 'leaked\n' > "$P/tpl/.env"
  (cd "$T" && mkdir -p tarsrc && printf 'leaked\n' > tarsrc/.env && tar -cf "$P/evil.tar" -C tarsrc .env)
  printf -- '--- .env\n+++ .env\n@@ -1 +1 @@\n-API_KEY=SECRET\n+API_KEY=leaked\n' > "$P/fix.diff"
  cp "$P/.env" "$T/env.orig"
  cp "$P/secrets/key" "$T/key.orig"
}

ncmds=$(wc -l < "$T/commands.tsv")
check "at least twelve spellings are tried" test "$ncmds" -ge 12

for mode in default bypassPermissions; do
  for provider in ${PROVIDERS:-anthropic openai}; do
    setup_files
    start_mock "$T/scenario.json"
    use_provider "$provider"
    json=$("$LOOM_BIN" -p "change the env file" --permission-mode "$mode" --cwd "$P" \
      --output-format json 2>"$T/err") || true
    file=$(session_file "$(jq -r .session_id <<<"$json")")
    result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
    check "$mode/$provider: .env is byte-identical" cmp -s "$P/.env" "$T/env.orig"
    check "$mode/$provider: secrets/key is byte-identical" cmp -s "$P/secrets/key" "$T/key.orig"
    check "$mode/$provider: no .env.gz appeared" test ! -e "$P/.env.gz"
    check "$mode/$provider: .env is still a plain file" test -f "$P/.env" -a ! -L "$P/.env"
    while IFS=$'\t' read -r id cmd; do
      out=$(result "$id")
      assert_contains "$mode/$provider: $cmd — denied" "$out" "denied"
      case "$id" in
        w3[0-2]|w36) assert_contains "$mode/$provider: $cmd — names the rule" "$out" "Write(secrets/**)" ;;
        w3[7-9]|w4[02]) ;;   # any file: either rule may be the one named
        *) assert_contains "$mode/$provider: $cmd — names the rule" "$out" "Edit(.env)" ;;
      esac
    done < "$T/commands.tsv"
    check "$mode/$provider: the harmless copy ran" cmp -s "$P/copy.txt" "$P/in.txt"
    assert_eq "$mode/$provider: the run completed" "$(jq -r .result <<<"$json")" "Done trying."
  done
done
finish
