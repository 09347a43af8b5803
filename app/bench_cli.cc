// `attn bench`: binds flags to BenchOptions and prints the result.
#include <memory>
#include <string>

#include "attn/error.h"
#include "commands.h"
#include "commands/bench.h"
#include "commands/flags.h"
#include "console.h"

namespace attn::cli {

Action add_bench(CLI::App& app) {
  struct Flags {
    BenchOptions o;
    std::string n = "2048", d = "64", heads = "1", batch = "1", dtype = "f32", threads = "0";
    std::string seconds = "1", max_elements;
    bool no_weights = false, json = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* b = app.add_subcommand("bench", "time the attention kernels on random inputs");
  b->allow_extras();
  b->add_option("--n", f->n, "sequence length: queries = keys (default 2048)")->type_name("N");
  b->add_option("--d", f->d, "head width (default 64)")->type_name("N");
  b->add_option("--heads", f->heads, "heads (default 1)")->type_name("N");
  b->add_option("--batch", f->batch, "batch size (default 1)")->type_name("N");
  b->add_option("--dtype", f->dtype, "f32 (default) or f64")->type_name("NAME");
  b->add_flag("--no-weights", f->no_weights, "output only: the streaming kernel, no n×n weights");
  b->add_flag("--causal", f->o.causal, "with a causal mask (skips the masked tiles)");
  // Today's attention, spelled and checked as for attn run.
  auto settings = add_setting_flags(b, "Today's attention (as for attn run)", true);
  b->add_option("--threads", f->threads, "threads (default: all cores)")->type_name("N");
  b->add_option("--seconds", f->seconds,
                "repeat for at least this many seconds, such as 0.5 (default 1)")
      ->type_name("S");
  b->add_flag("--json", f->json, "one JSON line instead of text");
  b->add_option("--max-elements", f->max_elements,
                "largest tensor to allocate, in elements (default 2^26)")
      ->type_name("N");
  return [f, b, settings]() {
    BenchOptions& o = f->o;
    settings(o.settings);
    o.n = parse_int_flag("--n", f->n, 1, 1 << 20);
    o.d = parse_int_flag("--d", f->d, 1, 1 << 16);
    o.heads = parse_int_flag("--heads", f->heads, 1, 4096);
    o.batch = parse_int_flag("--batch", f->batch, 1, 1 << 20);
    o.threads = parse_int_flag("--threads", f->threads, 0, 1024);
    o.dtype = parse_dtype_flag("--dtype", f->dtype);
    o.min_seconds = parse_nonnegative_flag("--seconds", f->seconds);
    if (o.min_seconds > 3600) {
      throw_usage("--seconds: expected a number of seconds from 0 to 3600, got '" +
                  message_text(f->seconds) + "'");
    }
    o.weights = !f->no_weights;
    if (!f->max_elements.empty()) o.max_elements = parse_max_elements_flag(f->max_elements);
    const BenchResult r = run_bench(o);
    StdConsole console;
    console.out(f->json ? bench_json(o, r) : bench_text(o, r));
    return 0;
  };
}

}  // namespace attn::cli
