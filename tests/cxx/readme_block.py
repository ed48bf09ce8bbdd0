"""Exit 0 when README.md has a fenced block of LANG equal to FILE, verbatim
(the C++ and Rust quick starts; usage: readme_block.py README LANG FILE)."""
import re
import sys

readme, lang, path = sys.argv[1:4]
text = open(readme, encoding="utf-8").read()
src = open(path, encoding="utf-8").read()
blocks = re.findall(r"```" + re.escape(lang) + r"\n(.*?)```", text, re.S)
sys.exit(0 if src in blocks else f"README.md has no ```{lang} block equal to {path}")
