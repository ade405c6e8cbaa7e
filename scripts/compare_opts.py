"""The options paths-compare.py and cct-compare.py share: [--at-most]
[--skip NAME]... [--skip-matching REGEX]... EXACT FILE...  Imported from
the scripts' own directory."""
import re


class Opts:
    def __init__(self):
        self.at_most = False
        self.skip = set()
        self.matching = []
        self.exact = None
        self.files = []

    def left_out(self, name):
        """Is procedure NAME one the caller asked to leave out?"""
        return name in self.skip or any(m.search(name or "") for m in self.matching)


def parse(argv, usage):
    """The options of argv (without the program's name), or None, usage
    printed, when they are not what the scripts take."""
    o = _parse(argv)
    if not o:
        print(usage)
    return o


def _parse(argv):
    o, args = Opts(), list(argv)
    while args and args[0].startswith("--"):
        if args[0] == "--at-most":
            o.at_most = True
            args = args[1:]
        elif args[0] in ("--skip", "--skip-matching") and len(args) > 1:
            if args[0] == "--skip":
                o.skip.add(args[1])
            else:
                o.matching.append(re.compile(args[1]))
            args = args[2:]
        else:
            return None
    if len(args) < 2:
        return None
    o.exact, o.files = args[0], args[1:]
    return o
