# A POSIX shell script for dash: pipes, subshells, loops, command
# substitution, functions, case, arithmetic, parameter expansion, here
# documents, redirections, traps and exit status.  Deterministic; uses only
# the external commands tr, sort, head and cat.  Exits with status 3.

work=${TMPDIR:-/tmp}/cpo-dash-test.$$
mkdir "$work" || exit 1
trap 'rm -rf "$work"' EXIT

# loops and arithmetic
i=0 sum=0
while [ $i -lt 100 ]; do
  i=$((i + 1))
  sum=$((sum + i * i))
done
echo "sum of squares 1..100: $sum"
for n in 3 5 8 13; do
  printf '%s ' "$((n * (n + 1) / 2))"
done
echo

# functions with local state, return codes and recursion
fact() {
  if [ "$1" -le 1 ]; then echo 1; return 0; fi
  echo $(( $1 * $(fact $(($1 - 1))) ))
}
echo "10! = $(fact 10)"
is_even() { return $(($1 % 2)); }
evens=""
for n in 1 2 3 4 5 6 7 8 9 10; do
  if is_even "$n"; then evens="$evens$n "; fi
done
echo "evens: $evens"

# pipes through builtins and external commands
printf '%s\n' pear apple fig banana cherry apple | sort | tr 'a-z' 'A-Z' | head -n 4
count=$(printf 'a\nb\nc\nd\ne\n' | while read -r line; do echo "$line"; done | sort -r | head -n 2 | tr '\n' ',')
echo "pipeline result: $count"

# subshells do not change the parent
x=outer
(x=inner; cd /; echo "in subshell: x=$x pwd=$(pwd)")
echo "after subshell: x=$x"
y=$(x=cmdsub; echo "$x")
echo "command substitution gave $y, x is still $x"
(exit 7)
echo "subshell exit status: $?"

# nested command substitution and quoting
word="a b  c"
echo "count of words: $(set -- $word; echo $#), quoted: $(printf '[%s]' "$word")"
echo "nested: $(echo "outer $(echo "inner $(echo deepest)")")"

# parameter expansion
path=/usr/local/lib/libexample.so.1.2
echo "basename: ${path##*/}  dirname: ${path%/*}  length: ${#path}"
echo "strip suffix: ${path%.*}  strip longest: ${path%%.*}"
unset undefined
echo "default: ${undefined:-fallback} assigned: ${undefined:=now-set} then: $undefined"

# case with patterns
for f in main.c notes.txt Makefile image.PNG run.sh; do
  case $f in
    *.c|*.h) kind=source ;;
    *.txt) kind=text ;;
    [Mm]akefile) kind=build ;;
    *.[Pp][Nn][Gg]) kind=picture ;;
    *) kind=other ;;
  esac
  printf '%-10s %s\n' "$f" "$kind"
done

# here documents, redirections and reading a file back
cat > "$work/data" <<END
alpha 3
beta 1
gamma 2
END
echo "delta 4" >> "$work/data"
total=0
while read -r name value; do
  total=$((total + value))
done < "$work/data"
echo "total from file: $total, lines: $(cat "$work/data" | while read -r l; do echo x; done | tr -d '\n')"
sort -k2 -n "$work/data" | head -n 2
{ echo to-stderr >&2; echo to-stdout; } 2>/dev/null

# positional parameters and shift
set -- one two three four
echo "args: $# first=$1"
shift 2
echo "after shift: $# $*"
IFS=:
set -- $(echo "a:b:c")
echo "split on colon: $#"
IFS=' 	
'

# eval, getopts, string tests
eval 'dyn_var=evaluated'
echo "eval: $dyn_var"
set -- -a -b value rest
while getopts ab: opt; do
  case $opt in
    a) echo "option a" ;;
    b) echo "option b=$OPTARG" ;;
  esac
done
shift $((OPTIND - 1))
echo "remaining: $*"
[ -z "" ] && [ -n "x" ] && [ "abc" != "abd" ] && echo "string tests ok"
exit 3
