"""llama.cpp's shared libraries through ctypes, for reference numbers only
(attn never links them).

The libraries are node-llama-cpp's prebuilt CPU build (llama.cpp release
"v0.5.0" of that package; its source is the git bundle
node_modules/node-llama-cpp/llama/gitRelease.bundle). The structs below
follow that source's include/llama.h and ggml/include/ggml.h field by field.
Set LLAMACPP_LIB_DIR to use another copy.

  lib = LlamaCpp()
  model = lib.load_model("model.gguf")
  out = lib.forward(model, ids)     # logits [n][vocab], attentions {layer: [heads][n][n]}
  lib.quantize("in.gguf", "out.gguf", "Q4_K_M")
"""
import ctypes as C
import os

import numpy as np

DEFAULT_LIB_DIR = ("/work/llama/node_modules/@node-llama-cpp/linux-x64/bins/"
                   "linux-x64")

GGML_TYPE_F32 = 0
GGML_TYPE_F16 = 1
LLAMA_FLASH_ATTN_TYPE_DISABLED = 0
LLAMA_LOAD_MODE_NONE = 0
LLAMA_LAZY_MODE_OFF = 0

# llama_ftype values (include/llama.h)
FTYPES = {"F32": 0, "F16": 1, "Q4_0": 2, "Q4_1": 3, "Q8_0": 7, "Q5_0": 8,
          "Q5_1": 9, "Q2_K": 10, "Q3_K_S": 11, "Q3_K_M": 12, "Q3_K_L": 13,
          "Q4_K_S": 14, "Q4_K_M": 15, "Q5_K_S": 16, "Q5_K_M": 17, "Q6_K": 18,
          "IQ4_NL": 25, "IQ4_XS": 30, "BF16": 32}

EVAL_CB = C.CFUNCTYPE(C.c_bool, C.c_void_p, C.c_bool, C.c_void_p)
LOG_CB = C.CFUNCTYPE(None, C.c_int, C.c_char_p, C.c_void_p)


class ModelParams(C.Structure):
    _fields_ = [("devices", C.c_void_p), ("tensor_buft_overrides", C.c_void_p),
                ("n_gpu_layers", C.c_int32), ("split_mode", C.c_int),
                ("load_mode", C.c_int), ("lazy_mode", C.c_int),
                ("main_gpu", C.c_int32), ("tensor_split", C.c_void_p),
                ("progress_callback", C.c_void_p),
                ("progress_callback_user_data", C.c_void_p),
                ("kv_overrides", C.c_void_p), ("vocab_only", C.c_bool),
                ("check_tensors", C.c_bool), ("use_extra_bufts", C.c_bool),
                ("no_host", C.c_bool), ("no_alloc", C.c_bool),
                ("load_mtp", C.c_bool)]


class ContextParams(C.Structure):
    _fields_ = [("n_ctx", C.c_uint32), ("n_batch", C.c_uint32),
                ("n_ubatch", C.c_uint32), ("n_seq_max", C.c_uint32),
                ("n_rs_seq", C.c_uint32), ("n_outputs_max", C.c_uint32),
                ("n_outputs_max_per_seq", C.c_uint32),
                ("n_threads", C.c_int32), ("n_threads_batch", C.c_int32),
                ("ctx_type", C.c_int), ("rope_scaling_type", C.c_int),
                ("pooling_type", C.c_int), ("attention_type", C.c_int),
                ("flash_attn_type", C.c_int), ("rope_freq_base", C.c_float),
                ("rope_freq_scale", C.c_float), ("yarn_ext_factor", C.c_float),
                ("yarn_attn_factor", C.c_float), ("yarn_beta_fast", C.c_float),
                ("yarn_beta_slow", C.c_float), ("yarn_orig_ctx", C.c_uint32),
                ("defrag_thold", C.c_float), ("cb_eval", EVAL_CB),
                ("cb_eval_user_data", C.c_void_p), ("type_k", C.c_int),
                ("type_v", C.c_int), ("abort_callback", C.c_void_p),
                ("abort_callback_data", C.c_void_p), ("embeddings", C.c_bool),
                ("offload_kqv", C.c_bool), ("no_perf", C.c_bool),
                ("op_offload", C.c_bool), ("swa_full", C.c_bool),
                ("kv_unified", C.c_bool), ("samplers", C.c_void_p),
                ("n_samplers", C.c_size_t), ("ctx_other", C.c_void_p)]


class Batch(C.Structure):
    _fields_ = [("n_tokens", C.c_int32), ("token", C.POINTER(C.c_int32)),
                ("embd", C.POINTER(C.c_float)), ("pos", C.POINTER(C.c_int32)),
                ("n_seq_id", C.POINTER(C.c_int32)),
                ("seq_id", C.POINTER(C.POINTER(C.c_int32))),
                ("logits", C.POINTER(C.c_int8))]


class QuantizeParams(C.Structure):
    _fields_ = [("nthread", C.c_int32), ("ftype", C.c_int),
                ("output_tensor_type", C.c_int),
                ("token_embedding_type", C.c_int),
                ("allow_requantize", C.c_bool),
                ("quantize_output_tensor", C.c_bool), ("only_copy", C.c_bool),
                ("pure", C.c_bool), ("keep_split", C.c_bool),
                ("dry_run", C.c_bool), ("imatrix", C.c_void_p),
                ("kv_overrides", C.c_void_p), ("tt_overrides", C.c_void_p),
                ("prune_layers", C.c_void_p), ("max_buf_size", C.c_size_t)]


class GgmlTensor(C.Structure):   # ggml/include/ggml.h, struct ggml_tensor
    _fields_ = [("type", C.c_int), ("buffer", C.c_void_p),
                ("ne", C.c_int64 * 4), ("nb", C.c_size_t * 4), ("op", C.c_int),
                ("op_params", C.c_int32 * 16), ("flags", C.c_int32),
                ("src", C.c_void_p * 10), ("view_src", C.c_void_p),
                ("view_offs", C.c_size_t), ("data", C.c_void_p),
                ("name", C.c_char * 64), ("extra", C.c_void_p),
                ("padding", C.c_char * 8)]


class LlamaCpp:
    def __init__(self, lib_dir=None, quiet=True):
        lib_dir = lib_dir or os.environ.get("LLAMACPP_LIB_DIR", DEFAULT_LIB_DIR)
        mode = C.RTLD_GLOBAL
        self.base = C.CDLL(os.path.join(lib_dir, "libggml-base.so"), mode=mode)
        self.ggml = C.CDLL(os.path.join(lib_dir, "libggml.v0.5.0.so"), mode=mode)
        self.llama = C.CDLL(os.path.join(lib_dir, "libllama.v0.5.0.so"), mode=mode)
        L, G = self.llama, self.ggml
        self._log_cb = LOG_CB(self._log)
        self.log_lines = []
        self.quiet = quiet
        L.llama_log_set(self._log_cb, None)
        self.base.ggml_log_set(self._log_cb, None)
        G.ggml_backend_load_all_from_path.argtypes = [C.c_char_p]
        G.ggml_backend_load_all_from_path(lib_dir.encode())
        L.llama_backend_init()
        L.llama_model_default_params.restype = ModelParams
        L.llama_context_default_params.restype = ContextParams
        L.llama_model_quantize_default_params.restype = QuantizeParams
        L.llama_model_load_from_file.restype = C.c_void_p
        L.llama_model_load_from_file.argtypes = [C.c_char_p, ModelParams]
        L.llama_init_from_model.restype = C.c_void_p
        L.llama_init_from_model.argtypes = [C.c_void_p, ContextParams]
        L.llama_decode.restype = C.c_int32
        L.llama_decode.argtypes = [C.c_void_p, Batch]
        L.llama_batch_init.restype = Batch
        L.llama_batch_init.argtypes = [C.c_int32, C.c_int32, C.c_int32]
        L.llama_batch_free.argtypes = [Batch]
        L.llama_get_logits_ith.restype = C.POINTER(C.c_float)
        L.llama_get_logits_ith.argtypes = [C.c_void_p, C.c_int32]
        L.llama_model_get_vocab.restype = C.c_void_p
        L.llama_model_get_vocab.argtypes = [C.c_void_p]
        L.llama_vocab_n_tokens.restype = C.c_int32
        L.llama_vocab_n_tokens.argtypes = [C.c_void_p]
        L.llama_model_n_layer.restype = C.c_int32
        L.llama_model_n_layer.argtypes = [C.c_void_p]
        L.llama_model_free.argtypes = [C.c_void_p]
        L.llama_free.argtypes = [C.c_void_p]
        L.llama_model_quantize.restype = C.c_uint32
        L.llama_model_quantize.argtypes = [C.c_char_p, C.c_char_p,
                                           C.POINTER(QuantizeParams)]
        L.llama_synchronize.argtypes = [C.c_void_p]
        L.llama_model_rope_type.restype = C.c_int
        L.llama_model_rope_type.argtypes = [C.c_void_p]
        L.llama_model_meta_val_str.restype = C.c_int32
        L.llama_model_meta_val_str.argtypes = [C.c_void_p, C.c_char_p,
                                               C.c_char_p, C.c_size_t]
        self.base.ggml_backend_tensor_get.argtypes = [C.c_void_p, C.c_void_p,
                                                      C.c_size_t, C.c_size_t]
        self.base.ggml_nbytes.restype = C.c_size_t
        self.base.ggml_nbytes.argtypes = [C.c_void_p]
        self.base.ggml_is_contiguous.restype = C.c_bool
        self.base.ggml_is_contiguous.argtypes = [C.c_void_p]

    def _log(self, level, text, _):
        line = text.decode("utf-8", "replace") if text else ""
        self.log_lines.append(line)
        if len(self.log_lines) > 4000:
            del self.log_lines[:2000]
        if not self.quiet:
            print(line, end="")

    def last_log(self, n=20):
        return "".join(self.log_lines[-n:])

    def load_model(self, path):
        p = self.llama.llama_model_default_params()
        p.n_gpu_layers = 0
        p.load_mode = LLAMA_LOAD_MODE_NONE   # read, no mmap
        p.lazy_mode = LLAMA_LAZY_MODE_OFF
        p.use_extra_bufts = False            # no weight repacking
        p.check_tensors = True
        self.log_lines.clear()
        m = self.llama.llama_model_load_from_file(str(path).encode(), p)
        if not m:
            raise RuntimeError(f"llama.cpp refused {path}:\n{self.last_log(15)}")
        return m

    def free_model(self, model):
        self.llama.llama_model_free(model)

    def meta(self, model, key):
        buf = C.create_string_buffer(256)
        n = self.llama.llama_model_meta_val_str(model, key.encode(), buf, 256)
        return buf.value.decode() if n >= 0 else None

    def context(self, model, n_ctx, threads=1, cb=None, n_batch=None):
        p = self.llama.llama_context_default_params()
        p.n_ctx = n_ctx
        p.n_batch = n_batch or n_ctx
        p.n_ubatch = n_batch or n_ctx
        p.n_threads = threads
        p.n_threads_batch = threads
        p.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED
        p.type_k = GGML_TYPE_F32
        p.type_v = GGML_TYPE_F32
        p.offload_kqv = False
        p.op_offload = False
        p.no_perf = True
        if cb is not None:
            p.cb_eval = cb
        ctx = self.llama.llama_init_from_model(model, p)
        if not ctx:
            raise RuntimeError(f"llama_init_from_model failed:\n{self.last_log(15)}")
        return ctx

    def _batch(self, ids, all_logits):
        n = len(ids)
        b = self.llama.llama_batch_init(n, 0, 1)
        b.n_tokens = n
        for i, t in enumerate(ids):
            b.token[i] = int(t)
            b.pos[i] = i
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = 0
            b.logits[i] = 1 if (all_logits or i == n - 1) else 0
        return b

    def forward(self, model, ids, threads=1, capture=("kq_soft_max",)):
        """One llama_decode of ids (positions 0..n-1, one sequence) with flash
        attention off and an F32 KV cache. Returns (logits [n][vocab] float32,
        {tensor name: array}) where each captured kq_soft_max-L is
        [heads][n][n] (the query rows, the first n KV cells)."""
        n = len(ids)
        captured = {}

        def cb(tp, ask, _):
            t = GgmlTensor.from_address(tp)
            name = t.name.decode()
            if ask:
                return any(name.startswith(c + "-") for c in capture)
            if any(name.startswith(c + "-") for c in capture):
                ne = list(t.ne)
                assert t.type == GGML_TYPE_F32, name
                size = self.base.ggml_nbytes(tp)
                buf = np.empty(size // 4, dtype=np.float32)
                assert self.base.ggml_is_contiguous(tp), name
                self.base.ggml_backend_tensor_get(tp, buf.ctypes.data, 0, size)
                a = buf.reshape(ne[3], ne[2], ne[1], ne[0])
                captured[name] = a.copy()
            return True

        cbf = EVAL_CB(cb)
        n_ctx = max(256, ((n + 255) // 256) * 256)
        ctx = self.context(model, n_ctx, threads=threads, cb=cbf, n_batch=n_ctx)
        b = self._batch(ids, True)
        try:
            rc = self.llama.llama_decode(ctx, b)
            if rc != 0:
                raise RuntimeError(f"llama_decode returned {rc}:\n{self.last_log(15)}")
            vocab = self.llama.llama_vocab_n_tokens(
                self.llama.llama_model_get_vocab(model))
            logits = np.empty((n, vocab), dtype=np.float32)
            for i in range(n):
                p = self.llama.llama_get_logits_ith(ctx, i)
                logits[i] = np.ctypeslib.as_array(p, shape=(vocab,))
        finally:
            self.llama.llama_batch_free(b)
            self.llama.llama_free(ctx)
        atts = {}
        for name, a in captured.items():
            # ggml ne [n_kv, n_tokens, n_head, n_stream] -> [stream][head][token][kv]
            atts[name] = a[0, :, :n, :n]
        return logits, atts

    def quantize(self, src, dst, ftype, threads=2):
        p = self.llama.llama_model_quantize_default_params()
        p.ftype = FTYPES[ftype]
        p.nthread = threads
        self.log_lines.clear()
        rc = self.llama.llama_model_quantize(str(src).encode(), str(dst).encode(),
                                             C.byref(p))
        if rc != 0:
            raise RuntimeError(f"llama_model_quantize({ftype}) failed:\n{self.last_log(15)}")


def layer_attentions(atts, n_layers):
    """[layers][heads][n][n] from forward()'s kq_soft_max-L captures."""
    return np.stack([atts[f"kq_soft_max-{i}"] for i in range(n_layers)])
