#!/bin/sh
# Checks that an attn program runs on any x86-64: AVX instructions (VEX or
# EVEX encoded, ymm registers) appear only in functions of the kernels
# built for AVX2 or AVX-512, and AVX-512 ones (zmm, mask registers,
# registers 16-31) only in the AVX-512 kernels. Anything else, a copy of a
# std::vector or Eigen function compiled with -mavx2 say, would crash a
# CPU without them (lib/src/kernel/isa_region.h explains how it is kept out).
# Also checks that the kernels do use their instruction sets.
#
#   scripts/check_isa.sh [PROGRAM]      (default build/attn)
#
# Prints one line per function in the wrong place and exits 1, or a
# summary and exits 0. A build with -DATTN_NATIVE=ON fails it by design.
# Needs objdump (binutils) and c++filt.
set -eu

bin=${1:-build/attn}
if [ ! -f "$bin" ]; then
  echo "check_isa.sh: no program at $bin" >&2
  exit 2
fi
for tool in objdump c++filt; do
  if ! command -v $tool >/dev/null; then
    echo "check_isa.sh: needs $tool (apt-get install binutils)" >&2
    exit 2
  fi
done

status=0
report=$(objdump -d --no-show-raw-insn "$bin" | awk '
  # Functions by mangled name: namespace attn::kernel::avx2 (and its
  # anonymous namespace and lambdas) is _ZN4attn6kernel4avx2... or
  # _ZZN4attn6kernel4avx2...; other code that merely mentions its types
  # (std::vector<attn::kernel::avx2::...>) starts otherwise.
  function isa_of(fn) {
    if (fn ~ /^<_ZZ?N4attn6kernel6avx512/) return "avx512"
    if (fn ~ /^<_ZZ?N4attn6kernel4avx2/) return "avx2"
    return "baseline"
  }
  /^[0-9a-f]+ <.*>:$/ { fn = $2; sub(/:$/, "", fn); next }
  /^ *[0-9a-f]+:\t/ {
    split($0, part, "\t")
    insn = part[2]
    mnemonic = insn
    sub(/ .*/, "", mnemonic)
    evex = insn ~ /%zmm|%k[0-7]([^0-9]|$)|%[xy]mm(1[6-9]|2[0-9]|3[01])/ ||
           mnemonic ~ /^k(add|and|mov|not|or|shift|test|unpck|xnor|xor)/
    vex = evex || insn ~ /%ymm/ || mnemonic ~ /^v/
    if (!vex) next
    isa = isa_of(fn)
    used[fn] = 1
    if (evex) {
      evex_in[isa]++
      if (isa != "avx512" && !(fn in bad)) { bad[fn] = "AVX-512: " insn; order[++nbad] = fn }
    } else {
      vex_in[isa]++
      if (isa == "baseline" && !(fn in bad)) { bad[fn] = "AVX: " insn; order[++nbad] = fn }
    }
    if (mnemonic ~ /^vfmadd/) fma_in[isa]++
  }
  END {
    for (i = 1; i <= nbad; i++) print "outside the AVX kernels: " order[i] " " bad[order[i]]
    if (nbad) exit 1
    if (!fma_in["avx2"] || !evex_in["avx512"]) {
      print "the AVX2 kernels have " fma_in["avx2"] + 0 " FMA instructions, the AVX-512 ones " \
            evex_in["avx512"] + 0 " AVX-512 instructions: were they built for them?"
      exit 1
    }
    n = 0
    for (f in used) n++
    print "ok: AVX in " n " functions, all in attn::kernel::avx2 and ::avx512 (AVX2 " \
          vex_in["avx2"] + 0 " + AVX-512 " vex_in["avx512"] + evex_in["avx512"] " instructions)"
  }') || status=$?
printf '%s\n' "$report" | c++filt
exit $status
