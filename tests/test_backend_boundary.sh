#!/bin/sh
# Nothing above src/math touches parameter, gradient or learner memory directly (issue 13):
# it is device memory of the backend, reached only through backend ops (math/backend.h)
# and handed to the communicator only through a stage (bk_stage_out / bk_stage_in).
#
# A static check over the C files of src/nn, src/learn, src/parallel and src/train. Each C
# statement (text up to its ';', comments removed) is tested for
#   1. an element access or a mem* call on a device buffer: the names those modules give
#      them (params, grads, the learner's s1/s2, the engines' prev, delta, work, start,
#      pulled, r1, r2, sum, buf[k]);
#   2. a comm_* call that passes such a buffer (or nn_params / nn_grads) directly;
#   3. a call to a CPU kernel (cpu_*, bk_half_*, the old quant_*_column) instead of a
#      backend op.
# It knows the names, not the types: a device buffer under another name escapes it, so the
# engines and the learner keep these names. The places allowed to break a rule are listed
# in ALLOWED (file:rule, with the reason).
set -u
S=$(cd "${top_srcdir:-.}" && pwd)
# src/train/stats.c:1 - its a->sum is the host accumulator of the input features
#   (applyMeanVarNorm), summed from minibatch data, not device memory
ALLOWED="src/train/stats.c:1"
DEV='(params|grads|s1|s2|prev|delta|work|start|pulled|r1|r2|sum|buf\[[^]]*\])'
fail=0 n=0
for f in "$S"/src/nn/*.c "$S"/src/learn/*.c "$S"/src/parallel/*.c "$S"/src/train/*.c; do
    rel=${f#"$S"/}
    n=$((n + 1))
    out=$(sed -e 's://.*$::' "$f" | awk -v dev="$DEV" '
        BEGIN { incom = 0 }
        {
            line = $0
            # drop /* ... */ comments, also across lines
            out = ""
            while (length(line) > 0) {
                if (incom) {
                    i = index(line, "*/"); if (i == 0) { line = ""; break }
                    line = substr(line, i + 2); incom = 0
                } else {
                    i = index(line, "/*"); if (i == 0) { out = out line; line = ""; break }
                    out = out substr(line, 1, i - 1); line = substr(line, i + 2); incom = 1
                }
            }
            stmt = stmt " " out
            if (stmt !~ /[;{}]/) next
            s = stmt; stmt = ""
            gsub(/"([^"\\]|\\.)*"/, "\"\"", s)   # string literals say nothing
            if (s ~ ("(^|[^A-Za-z0-9_])" dev "[ ]*\\[")) print "1 " NR ": " s
            if (s ~ ("mem(cpy|set|move)[ ]*\\([^;]*(->|\\.|[^A-Za-z0-9_&])" dev "[ ]*[,)]")) print "1 " NR ": " s
            if (s ~ "comm_[a-z0-9_]+[ ]*\\(" && s ~ ("[^A-Za-z0-9_&]" dev "[ ]*[-+,)]|nn_params|nn_grads")) print "2 " NR ": " s
            if (s ~ /(^|[^A-Za-z0-9_])(cpu_[a-z0-9_]+|bk_half_[a-z_]+|quant_[a-z]+code_column)[ ]*\(/) print "3 " NR ": " s
        }')
    [ -z "$out" ] && continue
    echo "$out" | while read -r rule rest; do
        case " $ALLOWED " in
        *" $rel:$rule "*) continue ;;
        esac
        echo "FAIL: $rel:$rest (rule $rule)"
    done | grep . && fail=1
done
echo "# test_backend_boundary: $n files checked"
exit $fail
