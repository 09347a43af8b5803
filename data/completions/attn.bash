# bash completion for attn                                 -*- shell-script -*-
#
# Installed as share/bash-completion/completions/attn; or source it from
# ~/.bashrc. Completes commands, flags, the values of flags that take a
# name (variants, modes, scales, formats, colormaps, ...), file names for
# flags that take a file, and example names (asked of attn itself).
# tests/completion_test.cc holds these lists equal to `attn ... --help`.

# The flags of a command ("" is attn itself).
_attn_flags() {
  case $1 in
    run)
      echo "-h --help --example --mode --variant --heads --scale --temperature --scale-at" \
        "--mask-convention --mask-fill --fully-masked --dropout --seed --params-layout" \
        "--kv-heads --rope-theta --rope-dims --rope-layout --rope-offset --window --softcap" \
        "--sliding-window --q-offset --k-offset" \
        "--sinks --qk-norm --causal --rope --alibi --x --y --q --k --v --mask --bias --key-padding-mask" \
        "--valid-lens" \
        "--labels --key-labels --tokens --checkpoint --layer --arch --text --text-file --ids" \
        "--no-special --tokenizer" \
        "--hidden-out" \
        "--summary --top --texts --each-line --rollout-fusion --predict --logit-lens --logits-out" \
        "-f --format -w --weights --long -o --output --out-dir" \
        "--weights-out --trace --trace-format --query --similarity --precision --average-heads" \
        "--dtype --threads --check --expect --rtol --atol -q --quiet --max-elements" \
        "--max-input-bytes" \
        "--emit-pytorch --title --description --color --heatmap --show" \
        "--of --colormap --vmin --vmax --normalize --batch --head --max-size --fit --reduce" \
        "--cell-size --labels-every --annotate --color-scale --ignore-first --token-style --font"
      ;;
    heatmap)
      echo "-h --help -o --output --show --key --title --labels --key-labels --tokens --layer" \
        "--stack --layers --heads --summary -f --format --top -q --quiet" \
        "--max-input-bytes --max-elements --color --colormap --vmin --vmax --normalize --batch --head --max-size --fit --reduce" \
        "--cell-size --labels-every --annotate --color-scale --ignore-first --token-style --font --precision"
      ;;
    diff)
      echo "-h --help -f --format --key --layer --head --stack --tolerance --precision -q" \
        "--quiet" \
        "--max-input-bytes --max-elements" \
        "--heatmap --show --title --vmin --vmax --max-size --color"
      ;;
    bench)
      echo "-h --help --n --d --heads --batch --dtype --no-weights --causal --threads" \
        "--seconds --max-elements --json --kv-heads --rope --rope-theta --rope-dims" \
        "--rope-layout --alibi --window --softcap --sinks"
      ;;
    tokenize)
      echo "-h --help --tokenizer --checkpoint --text-file --no-special --parse-special -f" \
        "--format"
      ;;
    models)
      echo "-h --help -f --format"
      ;;
    examples | show | help) echo "-h --help" ;;
    *) echo "-h --help --version" ;;
  esac
}

# The values of a flag that takes a name; returns 1 for other flags.
_attn_values() {
  case $1 in
    --mode) echo "self cross qkv" ;;
    --variant) echo "scaled_dot dot additive single_layer biattention" ;;
    --scale) echo "sqrt_dk none dk cosine norm long_seq" ;;
    --scale-at) echo "scores output" ;;
    --mask-convention) echo "block keep" ;;
    --fully-masked) echo "zero uniform nan error" ;;
    --params-layout) echo "math torch" ;;
    --rope-layout) echo "half interleaved" ;;
    -f | --format) echo "table json csv" ;;
    --trace-format) echo "text markdown latex json" ;;
    --dtype) echo "f64 f32" ;;
    --of) echo "weights scores output bias rollout value-norm" ;;
    --rollout-fusion) echo "mean max min" ;;
    --colormap) echo "viridis magma gray blues rdbu viridis_r magma_r gray_r blues_r rdbu_r" ;;
    --normalize) echo "none row col" ;;
    --fit) echo "column slide" ;;
    --reduce) echo "mean max" ;;
    --annotate) echo "auto always never" ;;
    --token-style) echo "readable marker raw" ;;
    --color-scale) echo "linear log power:0.5" ;;
    --color) echo "auto always never" ;;
    --stack) echo "batch layers" ;;
    --summary) echo "entropy first previous self distance" ;;
    --arch) echo "llama mistral mixtral qwen2 qwen3 qwen2_moe qwen3_moe gemma gemma2 gemma3_text granite smollm3 olmo olmo2 phi3 phi stablelm starcoder2 cohere gpt_neox falcon opt gpt_oss deepseek_v3 gpt2 bert roberta" ;;
    *) return 1 ;;
  esac
}

_attn() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=""
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  # --flag=value: bash splits at '=' (COMP_WORDBREAKS).
  if [[ $cur == "=" ]]; then
    cur=""
  elif [[ $prev == "=" ]] && ((COMP_CWORD > 1)); then
    prev=${COMP_WORDS[COMP_CWORD - 2]}
  fi
  COMPREPLY=()

  # The command (and its subcommand) typed so far: the first words that are
  # not flags or flag values.
  local cmd="" sub="" i w
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    case $w in
      -* | =) continue ;;
    esac
    local before=${COMP_WORDS[i - 1]}
    [[ $before == "=" ]] && before=${COMP_WORDS[i - 2]}
    if [[ $before == -* ]] && _attn_takes_value "$before"; then continue; fi
    if [[ -z $cmd ]]; then
      cmd=$w
    elif [[ ($cmd == examples || $cmd == help) && -z $sub ]]; then
      sub=$w
    fi
  done

  local values
  if values=$(_attn_values "$prev"); then
    mapfile -t COMPREPLY < <(compgen -W "$values" -- "$cur")
    return 0
  fi
  case $prev in
    --example)
      # Ask the attn being completed, so the names always match it.
      mapfile -t COMPREPLY < <(compgen -W "$("${COMP_WORDS[0]}" examples 2>/dev/null |
        sed -n 's/^\([a-z0-9_]*\)  .*/\1/p')" -- "$cur")
      return 0
      ;;
    --out-dir)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -d -- "$cur")
      return 0
      ;;
    --x | --y | --q | --k | --v | --mask | --bias | --key-padding-mask | -o | --output | \
      --weights-out | --expect | --heatmap | --tokens | --checkpoint | --font | --tokenizer | \
      --hidden-out | --texts | --logits-out | \
      --text-file)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      return 0
      ;;
    --heads | --temperature | --mask-fill | --dropout | --seed | --valid-lens | --labels | \
      --key-labels | --precision | --max-elements | --max-input-bytes | --vmin | --vmax | \
      --batch | --head | --max-size | --key | --title | --description | --query | --n | --d | \
      --threads | --seconds | --layer | --cell-size | --labels-every | --tolerance | --text | \
      --ids | --top | --predict | --logit-lens)
      return 0 # a number or free text
      ;;
  esac

  if [[ $cur == -* ]]; then
    local name=$cmd
    [[ $cmd == examples && -n $sub ]] && name=show
    mapfile -t COMPREPLY < <(compgen -W "$(_attn_flags "$name")" -- "$cur")
    return 0
  fi
  case $cmd in
    "") mapfile -t COMPREPLY < <(compgen -W "run heatmap diff tokenize models examples bench help" -- "$cur") ;;
    help)
      if [[ -z $sub ]]; then
        mapfile -t COMPREPLY < <(compgen -W "run heatmap diff tokenize models examples bench" -- "$cur")
      elif [[ $sub == examples ]]; then
        mapfile -t COMPREPLY < <(compgen -W "show" -- "$cur")
      fi
      ;;
    examples)
      if [[ -z $sub ]]; then
        mapfile -t COMPREPLY < <(compgen -W "show" -- "$cur")
      else
        mapfile -t COMPREPLY < <(compgen -W "$("${COMP_WORDS[0]}" examples 2>/dev/null |
          sed -n 's/^\([a-z0-9_]*\)  .*/\1/p')" -- "$cur")
      fi
      ;;
    *)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      ;;
  esac
  return 0
}

# True when a flag takes a value (the next word is not a command or file).
_attn_takes_value() {
  case $1 in
    -h | --help | --version | --causal | --rope | --alibi | -w | --weights | --trace | --similarity | \
      --average-heads | --check | -q | --quiet | --emit-pytorch | --show | --no-weights | \
      --json | --each-line) return 1 ;;
  esac
  return 0
}

complete -F _attn attn
