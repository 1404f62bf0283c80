#!/usr/bin/env bash
# Checks that every relative link in README.md and docs/*.md points at an existing file and, where it
# has a #anchor, at a heading of that Markdown file (GitHub's anchor rules). Exit 1 on any broken link.
#   bash docs/check-links.sh
cd "$(dirname "$0")/.." && exec /usr/bin/python3 - README.md docs/*.md <<'EOF'
import os, re, sys
def strip_code(text):  # fenced blocks and inline code hold no links
    text = re.sub(r'^```.*?^```', '', text, flags=re.S | re.M)
    return re.sub(r'`[^`\n]*`', '', text)
def anchors(path):
    seen, out = {}, set()
    for line in re.sub(r'^```.*?^```', '', open(path, encoding='utf-8').read(), flags=re.S | re.M).splitlines():
        m = re.match(r'#{1,6}\s+(.*?)\s*#*\s*$', line)
        if not m: continue
        a = re.sub(r'[^\w\- ]', '', m.group(1).strip().lower()).replace(' ', '-')
        n = seen.get(a, 0); seen[a] = n + 1
        out.add(a if n == 0 else f'{a}-{n}')
    return out
bad = checked = 0
for md in sys.argv[1:]:
    for target in re.findall(r'!?\[[^\]]*\]\(([^)\s]+)\)', strip_code(open(md, encoding='utf-8').read())):
        if re.match(r'[a-z]+:', target): continue  # http:, https:, mailto:
        checked += 1
        path, _, anchor = target.partition('#')
        full = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
        if not os.path.exists(full):
            print(f'{md}: {target}: no such file'); bad += 1
        elif anchor and (not full.endswith('.md') or anchor not in anchors(full)):
            print(f'{md}: {target}: no such anchor'); bad += 1
print(f'{checked} relative links checked, {bad} broken')
sys.exit(1 if bad else 0)
EOF
