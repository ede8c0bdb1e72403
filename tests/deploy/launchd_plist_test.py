#!/usr/bin/env python3
"""deploy/launchd: the agent's plist is a valid XML property list with what launchd needs.

launchd itself is not here (macOS only): this checks the file, not that launchd runs it.
Usage: launchd_plist_test.py SOURCE_DIR
"""
import plistlib
import sys

path = sys.argv[1] + "/deploy/launchd/org.benchfleet.agent.plist"
with open(path, "rb") as f:
    plist = plistlib.load(f, fmt=plistlib.FMT_XML)

def check(cond, what):
    if not cond:
        sys.exit(f"FAIL: {path}: {what}")

check(plist.get("Label") == "org.benchfleet.agent", "Label is not org.benchfleet.agent")
args = plist.get("ProgramArguments", [])
check(args[:2] == ["/usr/local/bin/benchfleet-agent", "serve"], f"ProgramArguments: {args}")
check(any(a.startswith("--config=/") for a in args), "no --config")
check(any(a.startswith("--state-dir=/") for a in args), "no --state-dir")
check(any(a.startswith("--enroll-token-file=/") for a in args), "no --enroll-token-file")
check(not any("bfe_" in a or "bft_" in a for a in args), "a token on the command line")
check(plist.get("UserName", "root") not in ("root", ""), "runs as root")
check(plist.get("RunAtLoad") is True, "RunAtLoad is not true")
check(plist.get("KeepAlive") == {"SuccessfulExit": False}, "KeepAlive does not restart on failure only")
check(isinstance(plist.get("ExitTimeOut"), int), "no ExitTimeOut")
check(plist.get("StandardErrorPath", "").startswith("/"), "no StandardErrorPath")
# Round trip: plistlib writes it back to the same dictionary.
check(plistlib.loads(plistlib.dumps(plist)) == plist, "does not round-trip")
print("deploy/launchd: org.benchfleet.agent.plist parses as an XML plist")
