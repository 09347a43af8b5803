#!/usr/bin/python3
"""Writes data/variants/*.json: one small runnable example per attention
variant, per scaling and per heads/projection layout, each with an
`expected` block computed by PyTorch -- never by attn.

Run with Debian's Python (python3-torch 1.13); the `python3` of a pyenv that
may come first on PATH has no torch:

    /usr/bin/python3 data/variants/make_expected.py

Oracles, chosen to be as close to the posts' own code as possible:

  * the posts' modules themselves, copied below: the attention library's
    DotProductAttention, SingleLayerAttention, MultiHeadAttention and
    BiAttention, the cross-attention tutorial's CrossAttention;
  * d2l's DotProductAttention and AdditiveAttention,
    and torch.nn.MultiheadAttention, from tests/golden/make_golden.py;
  * a few lines of matmul/softmax/F.normalize written out per example.

Every example is also recomputed by `reference()` of make_golden.py (a
direct transcription of docs/spec.md in torch ops); the two must agree to
1e-12 or the script stops without writing. Inputs are small hand-made numbers
(mostly the blog post's word vectors), so the files are written with the same
bytes on every run.
"""

import collections
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "golden"))

import make_golden as G  # noqa: E402  (sets torch's default dtype to float64)
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn import init  # noqa: E402

torch.set_default_dtype(torch.float64)
TOLERANCE = 1e-9
SRC_LIBRARY = "a blog post walking through a PyTorch library of attention classes"
SRC_D2L = "d2l.ai, chapter Attention Scoring Functions (scaled dot-product attention)"
SRC_BLOG = "a Chinese-language blog post on self-attention (cat, milk, it, sweet)"
SRC_CROSS = "a PyTorch cross-attention tutorial (its CrossAttention module)"
SRC_SHAPES = "a Chinese-language blog post contrasting scaled dot-product attention and self-attention (its shapes example)"

# ---------------------------------------------------------------------------
# The posts' modules, copied with three changes only: init.xavier_normal is
# spelled xavier_normal_ (the old name is deprecated), torch.FloatTensor
# parameters become default-dtype (float64) tensors, and the weights are
# overwritten with the example's numbers before use. All run in eval() mode,
# so their dropout does nothing.


class LibraryLinear(nn.Module):
    ''' Simple Linear layer with xavier init '''

    def __init__(self, d_in, d_out, bias=True):
        super(LibraryLinear, self).__init__()
        self.linear = nn.Linear(d_in, d_out, bias=bias)
        init.xavier_normal_(self.linear.weight)

    def forward(self, x):
        return self.linear(x)


class LibraryDotProductAttention(nn.Module):
    ''' Dot-Product Attention '''

    def __init__(self, d_model, attn_dropout=0.1):
        super(LibraryDotProductAttention, self).__init__()
        self.temper = 1  # np.power(d_model, 0.5)
        self.dropout = nn.Dropout(attn_dropout)
        self.softmax = nn.Softmax(dim=2)

    def forward(self, q, k, v, attn_mask=None):
        attn = torch.bmm(q, k.transpose(1, 2)) / self.temper
        if attn_mask is not None:
            assert attn_mask.size() == attn.size()
            attn.data.masked_fill_(attn_mask, -float('inf'))
        attn = self.softmax(attn)
        attn = self.dropout(attn)
        output = torch.bmm(attn, v)
        return output, attn


class LibrarySingleLayerAttention(nn.Module):
    def __init__(self, d_model, d_k, attn_dropout=0.1):
        super(LibrarySingleLayerAttention, self).__init__()
        self.dropout = nn.Dropout(attn_dropout)
        self.softmax = nn.Softmax(dim=2)
        self.weight = nn.Parameter(torch.empty(d_k, 1))
        self.act = nn.LeakyReLU()
        init.xavier_normal_(self.weight)

    def forward(self, q, k, v, attn_mask=None):
        mb_size, len_q, d_k = q.size()
        mb_size, len_k, d_k = k.size()
        q = q.unsqueeze(2).expand(-1, -1, len_k, -1)
        k = k.unsqueeze(1).expand(-1, len_q, -1, -1)
        x = q - k
        attn = self.act(torch.matmul(x, self.weight).squeeze(3))
        if attn_mask is not None:
            assert attn_mask.size() == attn.size()
            attn_mask = attn_mask.eq(0).data
            attn.data.masked_fill_(attn_mask, -float('inf'))
        attn = self.softmax(attn)
        if attn_mask is not None:
            attn.data.masked_fill_(attn_mask, 0)
        attn = self.dropout(attn)
        output = torch.bmm(attn, v)
        return output, attn


class LibraryMultiHeadAttention(nn.Module):
    ''' Multi-Head Attention module '''

    def __init__(self, n_head, d_input, d_model, d_input_v=None, dropout=0.1):
        super(LibraryMultiHeadAttention, self).__init__()
        self.n_head = n_head
        d_k, d_v = d_model // n_head, d_model // n_head
        self.d_k = d_k
        self.d_v = d_v
        if d_input_v is None:
            d_input_v = d_input
        self.w_qs = nn.Parameter(torch.empty(n_head, d_input, d_k))
        self.w_ks = nn.Parameter(torch.empty(n_head, d_input, d_k))
        self.w_vs = nn.Parameter(torch.empty(n_head, d_input_v, d_v))
        self.attention = LibraryDotProductAttention(d_model)
        self.proj = LibraryLinear(n_head * d_v, d_model)
        self.dropout = nn.Dropout(dropout)
        init.xavier_normal_(self.w_qs)
        init.xavier_normal_(self.w_ks)
        init.xavier_normal_(self.w_vs)

    def forward(self, q, k, v, attn_mask=None):
        d_k, d_v = self.d_k, self.d_v
        n_head = self.n_head
        mb_size, len_q, d_input = q.size()
        mb_size, len_k, d_input = k.size()
        mb_size, len_v, d_input_v = v.size()
        q_s = q.repeat(n_head, 1, 1).view(n_head, -1, d_input)
        k_s = k.repeat(n_head, 1, 1).view(n_head, -1, d_input)
        v_s = v.repeat(n_head, 1, 1).view(n_head, -1, d_input_v)
        q_s = torch.bmm(q_s, self.w_qs).view(-1, len_q, d_k)
        k_s = torch.bmm(k_s, self.w_ks).view(-1, len_k, d_k)
        v_s = torch.bmm(v_s, self.w_vs).view(-1, len_v, d_v)
        outputs, attns = self.attention(q_s, k_s, v_s, attn_mask=attn_mask.repeat(n_head, 1, 1))
        outputs = torch.cat(torch.split(outputs, mb_size, dim=0), dim=-1)
        outputs = self.proj(outputs)
        outputs = self.dropout(outputs)
        return outputs, attns


class LibraryBiAttention(nn.Module):
    def __init__(self, input_size, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.input_linear = nn.Linear(input_size, 1, bias=False)
        self.memory_linear = nn.Linear(input_size, 1, bias=False)
        self.dot_scale = nn.Parameter(torch.Tensor(input_size).uniform_(1.0 / (input_size ** 0.5)))
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, input, memory, q_mask):
        bsz, input_len, memory_len = input.size(0), input.size(1), memory.size(1)
        input = self.dropout(input)
        memory = self.dropout(memory)
        input_dot = self.input_linear(input)
        memory_dot = self.memory_linear(memory).view(bsz, 1, memory_len)
        cross_dot = torch.bmm(input * self.dot_scale, memory.permute(0, 2, 1).contiguous())
        att = input_dot + memory_dot + cross_dot
        att = att - 1e30 * (1 - q_mask[:, None])
        weight_one = self.softmax(att)
        output_one = torch.bmm(weight_one, memory)
        weight_two = self.softmax(att.max(dim=-1)[0]).view(bsz, 1, input_len)
        output_two = torch.bmm(weight_two, input)
        # The post returns only the concatenation; the weights are kept here
        # so that attn's `weights` (= W1) can be checked too.
        self.weight_one = weight_one
        return torch.cat([input, output_one, input * output_one, output_two * output_one], dim=-1)


class TutorialCrossAttention(nn.Module):
    def __init__(self, embed_dim, hidden_dim, num_heads):
        super(TutorialCrossAttention, self).__init__()
        self.embed_dim = embed_dim
        self.hidden_dim = hidden_dim
        self.num_heads = num_heads
        self.query_proj = nn.Linear(embed_dim, hidden_dim * num_heads)
        self.key_proj = nn.Linear(embed_dim, hidden_dim * num_heads)
        self.value_proj = nn.Linear(embed_dim, hidden_dim * num_heads)
        self.out_proj = nn.Linear(hidden_dim * num_heads, embed_dim)

    def forward(self, query, context):
        batch_size, query_len, _ = query.size()
        context_len = context.size(1)
        query_proj = self.query_proj(query).view(batch_size, query_len, self.num_heads,
                                                 self.hidden_dim)
        key_proj = self.key_proj(context).view(batch_size, context_len, self.num_heads,
                                               self.hidden_dim)
        value_proj = self.value_proj(context).view(batch_size, context_len, self.num_heads,
                                                   self.hidden_dim)
        query_proj = query_proj.permute(0, 2, 1, 3)
        key_proj = key_proj.permute(0, 2, 1, 3)
        value_proj = value_proj.permute(0, 2, 1, 3)
        scores = torch.matmul(query_proj, key_proj.transpose(-2, -1)) / (self.hidden_dim ** 0.5)
        attn_weights = F.softmax(scores, dim=-1)
        context = torch.matmul(attn_weights, value_proj)
        context = context.permute(0, 2, 1, 3).contiguous().view(batch_size, query_len, -1)
        output = self.out_proj(context)
        return output, attn_weights


# ---------------------------------------------------------------------------
# The word vectors of the self-attention blog post. The post says dim = 4 and prints only the
# two middle entries; the "..." entries are taken as 0, as attn's examples do.

WORDS4 = collections.OrderedDict([
    ("cat", [0, 2, 2, 0]),
    ("milk", [0, 1, 3, 0]),
    ("it", [0, 2, 2, 0]),
    ("sweet", [0, 0, 4, 0]),
    ("hungry", [0, 4, 0, 0]),
])
# The same words with only the two numbers the post prints: (state, taste).
WORDS2 = collections.OrderedDict((k, v[1:3]) for k, v in WORDS4.items())
SWEET = ["cat", "milk", "it", "sweet"]
W_SINGLE = [0, 1, -1, 0]  # single_layer's w: (state - taste) of q_i minus that of k_j
HUNGRY = ["cat", "milk", "it", "hungry"]


def rows(table, names):
    return [list(table[n]) for n in names]


def T(x):
    if torch.is_tensor(x):
        return x.to(torch.float64)
    return torch.tensor(x, dtype=torch.float64)


def f3(x):
    return "%.3f" % float(x)



# ---------------------------------------------------------------------------
# Writing. Matrices are laid out one row per line, as in data/examples.

EXAMPLES = []  # (file name, document)


def plain(x):
    if torch.is_tensor(x):
        return plain(x.tolist())
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, dict):
        return collections.OrderedDict((k, plain(v)) for k, v in x.items())
    return x


def number(x):
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        if math.isnan(x) or math.isinf(x):
            raise ValueError("non-finite value in an example")
        if x == int(x) and abs(x) < 1e15:
            return str(int(x))
        return repr(x)
    return json.dumps(x, ensure_ascii=False)


def render(v, col):
    """v as JSON text starting at column col (for aligning nested rows)."""
    if isinstance(v, list):
        if all(not isinstance(e, (list, dict)) for e in v):
            return "[" + ", ".join(number(e) for e in v) + "]"
        sep = ",\n" + " " * (col + 1)
        return "[" + sep.join(render(e, col + 1) for e in v) + "]"
    return number(v)


def render_object(obj, indent):
    pad = " " * (indent + 2)
    lines = []
    for k, v in obj.items():
        head = pad + json.dumps(k, ensure_ascii=False) + ": "
        if isinstance(v, dict):
            lines.append(head + render_object(v, indent + 2))
        else:
            lines.append(head + render(v, len(head)))
    return "{\n" + ",\n".join(lines) + "\n" + " " * indent + "}"


def example(name, title, description, source, doc, output, weights, oracle):
    """Checks the oracle's numbers against reference() and keeps the file."""
    ref_out, ref_w = G.reference(doc)
    if not G.close(ref_out, output) or not G.close(ref_w, weights):
        print("%s: reference() disagrees with the oracle (%s)" % (name, oracle), file=sys.stderr)
        print("oracle output", output, "\nreference output", ref_out, file=sys.stderr)
        print("oracle weights", weights, "\nreference weights", ref_w, file=sys.stderr)
        sys.exit(1)
    full = collections.OrderedDict()
    full["title"] = title
    full["description"] = (description + " Expected numbers: PyTorch " +
                           torch.__version__.split("a")[0] + ", float64, " + oracle +
                           " (data/variants/make_expected.py).")
    full["source"] = source
    for k, v in doc.items():
        full[k] = v
    full["expected"] = collections.OrderedDict(
        [("output", output.detach()), ("weights", weights.detach()), ("tolerance", TOLERANCE)])
    EXAMPLES.append((name + ".json", plain(full)))


def write_all():
    names = set(n for n, _ in EXAMPLES)
    for f in os.listdir(HERE):
        if f.endswith(".json") and f not in names:
            os.remove(os.path.join(HERE, f))  # an example that was renamed or dropped
    for fname, doc in EXAMPLES:
        with open(os.path.join(HERE, fname), "w", encoding="utf-8") as f:
            f.write(render_object(doc, 0) + "\n")
    print("wrote %d examples to %s" % (len(EXAMPLES), HERE))


# ---------------------------------------------------------------------------
# Oracle helpers.


def d2l_scaled_dot(q, k, v):
    """d2l's DotProductAttention, unbatched in and out."""
    return G.d2l_dot(T(q), T(k), T(v))


def softmax_attention(q, k, v, factor):
    """softmax(factor · Q·Kᵀ)·V written out; also returns the scores."""
    s = T(q) @ T(k).transpose(-1, -2) * factor
    w = torch.softmax(s, dim=-1)
    return w @ T(v), w


def library_dot(q, k, v):
    att = LibraryDotProductAttention(d_model=T(q).shape[-1]).eval()
    with torch.no_grad():
        return att(T(q), T(k), T(v))


def library_single_layer(q, k, v, w):
    q, k, v = T(q), T(k), T(v)
    batched = q.dim() == 3
    if not batched:
        q, k, v = q[None], k[None], v[None]
    att = LibrarySingleLayerAttention(d_model=q.shape[-1], d_k=q.shape[-1]).eval()
    with torch.no_grad():
        att.weight.copy_(T(w).reshape(-1, 1))
        o, a = att(q, k, v)
    return (o, a) if batched else (o[0], a[0])


def library_biattention(x, y, w_in, w_mem, dot_scale, key_padding_mask=None):
    x, y = T(x), T(y)
    batched = x.dim() == 3
    if not batched:
        x, y = x[None], y[None]
    d = x.shape[-1]
    keep = torch.ones(x.shape[0], y.shape[1])
    if key_padding_mask is not None:  # the post's q_mask: 1 = a real token
        keep = 1.0 - T(key_padding_mask).reshape(-1, y.shape[1]).expand(x.shape[0], -1)
    att = LibraryBiAttention(d, dropout=0.2).eval()
    assert att.dot_scale.dtype == torch.float64
    with torch.no_grad():
        att.input_linear.weight.copy_(T(w_in)[None])
        att.memory_linear.weight.copy_(T(w_mem)[None])
        att.dot_scale.copy_(T(dot_scale))
        o = att(x, y, keep)
    w = att.weight_one
    return (o, w) if batched else (o[0], w[0])


# ---------------------------------------------------------------------------
# The examples: one per variant.


def variants():
    X = rows(WORDS4, SWEET)
    o, w = d2l_scaled_dot(X, X, X)
    example(
        "scaled_dot", "scaled_dot: softmax(QKᵀ/√d_k)·V on \"The cat drank the milk because "
        "it was sweet.\"",
        "Self-attention (Q = K = V = X) on the four word vectors of the self-attention blog post, width 4 (the "
        "post's '...' entries are 0). scaled_dot is the default variant and its default scale "
        "is sqrt_dk: QKᵀ = [[8,8,8,8],[8,10,8,12],[8,8,8,8],[8,12,8,16]] is divided by √4 = 2 "
        "before the softmax. cat and it are equally similar to every word, so they average the "
        "four vectors (1.25, 2.75); sweet gives " + f3(w[3, 3]) + " of its attention to itself. "
        "These are the numbers of the formula the post states, not the ones it prints (see "
        "scale_at_output.json).",
        SRC_BLOG + " example 1; " + SRC_D2L + "; Vaswani et al. 2017, Attention Is All You Need",
        {"X": X, "labels": SWEET}, o, w, "d2l DotProductAttention")

    Xb = [rows(WORDS4, SWEET), rows(WORDS4, HUNGRY)]
    o, w = library_dot(Xb, Xb, Xb)
    example(
        "dot", "dot: softmax(QKᵀ)·V, no scaling, on both sentences of the self-attention blog post as a batch",
        "variant dot is scaled_dot with scale none: the raw dot products go into the softmax. "
        "The input is batched [2][4][4]: batch 0 is \"... because it was sweet\", batch 1 is "
        "\"... because it was hungry\" (the last word differs). Unscaled scores of 8 to 16 make "
        "the softmax sharp: sweet keeps " + f3(w[0, 3, 3]) + " of its attention, hungry " +
        f3(w[1, 3, 3]) + "; cat and it still spread theirs evenly.",
        SRC_LIBRARY + ", DotProductAttention (temper = 1); " + SRC_BLOG,
        {"variant": "dot", "X": Xb, "labels": ["cat", "milk", "it", "sweet/hungry"]}, o, w,
        "the attention library's DotProductAttention module")

    Q = rows(WORDS2, ["it", "sweet"])
    K = [[2, 2, 0], [1, 3, 1], [0, 4, 0]]
    V = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    Wq = [[0.5, 0], [0, 0.5]]
    Wk = [[0.5, 0], [0, 0.5], [0, 1]]
    wv = [-1, 1]
    o, w = G.d2l_additive(T(Q), T(K), T(V), T(Wq), T(Wk), T(wv), None, -G.INF)
    example(
        "additive", "additive (Bahdanau): S_ij = w_vᵀ·tanh(W_qᵀq_i + W_kᵀk_j), query and key "
        "widths differ",
        "Queries it (2,2) and sweet (0,4) have width 2 (state, taste); the keys cat (2,2,0), "
        "milk (1,3,1) and sweet (0,4,0) have width 3, the third number saying 'is a drink'. "
        "Additive attention does not need equal widths: W_q [2][2] and W_k [3][2] map both into "
        "h = 2 hidden units, unit 0 for the state and unit 1 for taste plus drink; w_v = (-1, 1) "
        "scores 'more taste than state'. So it scores cat " + f3(0) + " (tanh 2 - tanh 2), milk " +
        f3(math.tanh(3.5) - math.tanh(1.5)) + ", sweet " + f3(math.tanh(3) - math.tanh(1)) +
        ". W_q, W_k, w_v are scoring parameters (d2l's names), not projections: V is used as "
        "given, here one-hot rows, so each output row is the row of weights. The default scale "
        "of additive is none.",
        "Bahdanau et al. 2015, Neural Machine Translation by Jointly Learning to Align and "
        "Translate; d2l.ai, Attention Scoring Functions (AdditiveAttention)",
        {"variant": "additive", "Q": Q, "K": K, "V": V,
         "labels": {"queries": ["it", "sweet"], "keys": ["cat", "milk", "sweet"]},
         "params": {"W_q": Wq, "W_k": Wk, "w_v": wv}}, o, w,
        "d2l AdditiveAttention (nn.Linear without bias, tanh)")

    X = rows(WORDS4, SWEET)
    wvec = W_SINGLE
    o, w = library_single_layer(X, X, X, wvec)
    example(
        "single_layer", "single_layer: S_ij = LeakyReLU((q_i − k_j)·w), slope 0.01",
        "The attention library's SingleLayerAttention on the blog post's sentence. With w = (0, 1, -1, 0), "
        "(q_i − k_j)·w = (state − taste of q_i) − (state − taste of k_j); that is 0, -2, 0, -4 "
        "for cat, milk, it, sweet, so the score is LeakyReLU(d_i − d_j). cat looks hardest at "
        "sweet (score 4, weight " + f3(w[0, 3]) + "); sweet's differences are all negative, "
        "LeakyReLU turns them into -0.04, -0.02, -0.04, 0 and its weights are almost uniform. "
        "Unlike a dot product the score is not symmetric. The default scale is none (the post "
        "wonders why it does not divide by √d_k).",
        SRC_LIBRARY + ", SingleLayerAttention",
        {"variant": "single_layer", "X": X, "labels": SWEET, "params": {"w": wvec}}, o, w,
        "the attention library's SingleLayerAttention module (nn.LeakyReLU, slope 0.01)")

    Xd = rows(WORDS2, SWEET)
    Yq = [[0, 4], [4, 0], [0, 0]]
    p = {"w_in": [0.5, 0], "w_mem": [0, 0.25], "dot_scale": [0.5, 0.5]}
    kpm = [0, 0, 1]
    o, w = library_biattention(Xd, Yq, p["w_in"], p["w_mem"], p["dot_scale"], kpm)
    example(
        "biattention", "biattention (BiDAF-style): a 4-word document against a 3-token "
        "question whose last token is padding",
        "X is the document (cat, milk, it, sweet as (state, taste)), Y the memory: a question "
        "of the words sweet (0,4), hungry (4,0) and a padding token. S_ij = x_i·w_in + "
        "y_j·w_mem + (x_i ⊙ dot_scale)·y_j; key_padding_mask [0, 0, 1] keeps every document "
        "word off the padding. W1 (the reported weights) is the softmax over the question: "
        "milk leans to sweet (" + f3(w[1, 0]) + "). w2 is the softmax over the document of each "
        "word's best score max_j S_ij, o2 = w2·X one summary row; output row i = [x_i, O1_i, "
        "x_i ⊙ O1_i, o2 ⊙ O1_i], width 4·2 = 8. biattention takes no scale, temperature, heads "
        "or mask other than key_padding_mask.",
        SRC_LIBRARY + ", BiAttention; Seo et al. 2017, Bidirectional Attention Flow for Machine "
        "Comprehension (BiDAF)",
        {"variant": "biattention", "X": Xd, "Y": Yq,
         "labels": {"queries": SWEET, "keys": ["sweet", "hungry", "<pad>"]},
         "key_padding_mask": kpm, "params": p}, o, w,
        "the attention library's BiAttention module (padding as its q_mask, -1e30)")

    o, w = library_biattention(Xd, Xd, p["w_in"], p["w_mem"], p["dot_scale"])
    example(
        "biattention_self", "biattention in self mode: the document is its own memory (Y = X)",
        "Without Y, biattention runs in self mode and takes Y = X, like every other variant "
        "(attn's choice; the BiDAF layer is defined on a document X and a memory Y). Same parameters as "
        "biattention.json; each word of cat, milk, it, sweet attends over the same four words, "
        "and the output is [x_i, O1_i, x_i ⊙ O1_i, o2 ⊙ O1_i], width 8.",
        SRC_LIBRARY + ", BiAttention (called with memory = input)",
        {"variant": "biattention", "X": Xd, "labels": SWEET, "params": p}, o, w,
        "the attention library's BiAttention module with memory = input")


# ---------------------------------------------------------------------------
# One per scaling.


def scalings():
    X = rows(WORDS4, SWEET)
    S = T(X) @ T(X).T

    # sqrt_dk uses the width of a head.
    X2 = [WORDS2[n] + WORDS2[n] for n in SWEET]
    o, w = G.mha(T(X2), T(X2), T(X2), 4, 2)
    example(
        "scale_sqrt_dk", "scale sqrt_dk: d_k is the query width of one head",
        "Each word is (state, taste, state, taste) and heads = 2 splits the columns into two "
        "blocks of 2, so each head sees the blog post's vectors (state, taste) and divides by "
        "√d_k = √2 (the head's width), not √4 (the model width). Both heads hold the same "
        "numbers, so both get the same weights: sweet gives " + f3(w[0, 3, 3]) + " to itself, "
        "more than in scaled_dot.json where the padded width 4 gives √4. The weights are "
        "[heads][q][k]; the output is the two head outputs side by side.",
        SRC_BLOG + "; " + SRC_D2L + "; Vaswani et al. 2017 (d_k = d_model / h)",
        {"X": X2, "heads": 2, "scale": "sqrt_dk", "labels": SWEET}, o, w,
        "torch.nn.MultiheadAttention (identity projections)")

    o, w = softmax_attention(X, X, X, 1.0)
    example(
        "scale_none", "scale none: softmax(QKᵀ)·V with the scores as they are",
        "scale none on scaled_dot gives exactly variant dot. The raw scores of the blog post's "
        "sentence (8 to 16) make sweet keep " + f3(w[3, 3]) + " of its attention and milk " +
        f3(w[1, 3]) + " on sweet; compare scaled_dot.json (÷2) and scale_dk.json (÷4).",
        SRC_BLOG + "; " + SRC_LIBRARY + " (DotProductAttention, temper = 1)",
        {"X": X, "scale": "none", "labels": SWEET}, o, w, "torch matmul and softmax")

    o, w = softmax_attention(X, X, X, 1.0 / 4)
    example(
        "scale_dk", "scale dk: softmax(QKᵀ/d_k)·V",
        "Dividing by d_k = 4 instead of √d_k = 2 shrinks the scores to 2 .. 4, so the weights "
        "are flatter: sweet keeps " + f3(w[3, 3]) + " (scaled_dot.json: " +
        f3(torch.softmax(S[3] / 2, -1)[3]) + "). The self-attention blog post explains why dividing by d_k "
        "over-flattens (the variance of the scores becomes 1/d_k).",
        SRC_BLOG + ", 'why √d_k and not d_k'",
        {"X": X, "scale": "dk", "labels": SWEET}, o, w, "torch matmul and softmax")

    qn = F.normalize(T(X), dim=-1)
    cos = qn @ qn.T
    w_c = torch.softmax(cos, dim=-1)
    o = w_c @ T(X)
    example(
        "scale_cosine", "scale cosine: rows of Q and K normalised first (pre-normalisation)",
        "The self-attention blog post's pre-normalisation Q' = Q/‖Q‖, K' = K/‖K‖, V' = V: the scores become cosine "
        "similarities in [-1, 1] and no other factor applies. cat·milk = 8/(√8·√10) = " +
        f3(cos[0, 1]) + ", cat·sweet = 8/(√8·4) = " + f3(cos[0, 3]) + ". Lengths no longer "
        "count, so sweet (length 4) no longer dominates: its row is " +
        ", ".join(f3(x) for x in w_c[3]) + ". V is not normalised, so the outputs keep the "
        "words' scale.",
        SRC_BLOG + ", 'pre-normalisation'",
        {"X": X, "scale": "cosine", "labels": SWEET}, o, w_c,
        "F.normalize, matmul and softmax")

    Xh = [WORDS2[n] + [10 * v for v in WORDS2[n]] for n in SWEET]
    outs, ws = [], []
    for h in range(2):
        part = T(Xh)[:, 2 * h:2 * h + 2]
        ph = F.normalize(part, dim=-1)
        wh = torch.softmax(ph @ ph.T, dim=-1)
        outs.append(wh @ part)
        ws.append(wh)
    example(
        "scale_cosine_heads", "scale cosine with 2 heads: each head's rows are normalised "
        "separately",
        "Each word is (state, taste, 10·state, 10·taste); head 0 sees the first two columns, "
        "head 1 the last two. cosine normalises every row of Q and K per head, so head 1's "
        "factor 10 disappears and both heads get identical weights; only the outputs (from the "
        "unnormalised V) differ by 10. Normalising the whole 4-wide row instead would shrink "
        "head 0's scores to cos/101 and head 1's to 100·cos/101, and the heads would differ.",
        SRC_BLOG + ", 'pre-normalisation', per head as in nn.MultiheadAttention's split",
        {"X": Xh, "heads": 2, "variant": "dot", "scale": "cosine", "labels": SWEET},
        torch.cat(outs, dim=-1), torch.stack(ws), "F.normalize per head, matmul and softmax")

    fro = torch.linalg.norm(S)
    o, w = softmax_attention(X, X, X, 1.0 / float(fro))
    example(
        "scale_norm", "scale norm: S/‖S‖_F, the scores divided by their Frobenius norm",
        "The self-attention blog post's 'normalise the attention scores': QKᵀ of the sentence has Frobenius norm "
        "√1412 = " + f3(fro) + ", so every score lands in [0, 1] (16 → " + f3(16 / fro) +
        ") and the weights are nearly uniform: sweet's row is " +
        ", ".join(f3(x) for x in w[3]) + ". The norm is taken per (batch, head), over every "
        "score, masked ones included.",
        SRC_BLOG + ", 'normalise the attention scores to [0, 1]'",
        {"X": X, "scale": "norm", "labels": SWEET}, o, w,
        "torch.linalg.norm, matmul and softmax")

    names5 = ["cat", "milk", "it", "sweet", "hungry"]
    X5 = rows(WORDS4, names5)
    o, w = softmax_attention(X5, X5, X5, 1.0 / math.sqrt(4 * 5))
    example(
        "scale_long_seq", "scale long_seq: softmax(QKᵀ/(√d_k·√T))·V for long sequences",
        "The self-attention blog post's long-sequence scaling divides by √d_k·√T, T the number of keys, so that a "
        "longer sequence does not widen the range of scores. Here all five words of the post "
        "(cat, milk, it, sweet, hungry) attend to each other: T = 5, d_k = 4, factor 1/√20 = " +
        f3(1 / math.sqrt(20)) + ". sweet keeps " + f3(w[3, 3]) + ", hungry " + f3(w[4, 4]) +
        ". T is the total key count, masked keys included.",
        SRC_BLOG + ", 'long-sequence scaling'",
        {"X": X5, "scale": "long_seq", "labels": names5}, o, w, "torch matmul and softmax")

    o, w = softmax_attention(X, X, X, 0.1)
    example(
        "scale_number", "scale 0.1: a number multiplies the scores",
        "A number c gives softmax(c·QKᵀ)·V, PyTorch's scale= convention "
        "(F.scaled_dot_product_attention(..., scale=c)): c = 1/√d_k is sqrt_dk, c = 1 is none. "
        "With c = 0.1 the sentence's scores become 0.8 .. 1.6 and sweet keeps " + f3(w[3, 3]) +
        ". An explicit scale also works with dot and additive.",
        SRC_BLOG + " ('temperature: replace √d_k by a constant'); PyTorch "
        "scaled_dot_product_attention's scale argument",
        {"X": X, "scale": 0.1, "labels": SWEET}, o, w, "torch matmul and softmax")

    o, w = softmax_attention(X, X, X, 1.0 / (2 * 3))
    example(
        "scale_temperature", "temperature 3: the scaled scores are divided by 3",
        "temperature divides the scores after the scale: here sqrt_dk (÷2, the default of "
        "scaled_dot) and then ÷3, softmax(QKᵀ/(2·3))·V. A temperature above 1 flattens the "
        "weights (sweet keeps " + f3(w[3, 3]) + " instead of " +
        f3(torch.softmax(S[3] / 2, -1)[3]) + "), below 1 sharpens them. The self-attention blog post lists the "
        "temperature as replacing √d_k by a constant; that is scale none with a temperature.",
        SRC_BLOG + ", 'temperature parameter'",
        {"X": X, "temperature": 3, "labels": SWEET}, o, w, "torch matmul and softmax")

    w = torch.softmax(S, dim=-1)
    o = w @ T(X) / 2
    example(
        "scale_at_output", "scale_at output: softmax(QKᵀ)·V/√d, the numbers the self-attention blog post prints",
        "The self-attention blog post states softmax(QKᵀ/√d)·V but prints cat (0.625, 1.375), milk (0.089, 1.911), "
        "sweet (0.010, 1.990): those are softmax(QKᵀ)·V/√d, the factor applied after the "
        "softmax. scale_at output reproduces that: the weights are those of unscaled scores "
        "and the output of each head is divided by √4 = 2 (and by the temperature). Only "
        "scalar factors (sqrt_dk, dk, long_seq, a number) can move to the output; cosine and "
        "norm cannot.",
        SRC_BLOG + " example 1 (the printed numbers)",
        {"X": X, "scale": "sqrt_dk", "scale_at": "output", "labels": SWEET}, o, w,
        "torch matmul and softmax, then ÷2")

    qn = F.normalize(T(X), dim=-1)
    o, w = library_single_layer(qn, qn, T(X), W_SINGLE)
    example(
        "scale_cosine_single_layer", "scale cosine with single_layer: rows normalised before "
        "(q_i − k_j)·w",
        "cosine normalises the rows of Q and K for every variant, not only the dot ones: "
        "single_layer then scores LeakyReLU((q_i/‖q_i‖ − k_j/‖k_j‖)·w). Same sentence and w as "
        "single_layer.json; after normalisation the (state − taste) numbers of cat, milk, it, "
        "sweet are 0, -0.632, 0, -1 instead of 0, -2, 0, -4, so the weights are much flatter (cat on sweet: " + f3(w[0, 3]) + " instead of " +
        f3(library_single_layer(X, X, X, W_SINGLE)[1][0, 3]) + "). V is not normalised.",
        SRC_LIBRARY + ", SingleLayerAttention; " + SRC_BLOG + ", 'pre-normalisation'",
        {"variant": "single_layer", "X": X, "scale": "cosine", "labels": SWEET,
         "params": {"w": W_SINGLE}}, o, w,
        "F.normalize, then the attention library's SingleLayerAttention module")


# ---------------------------------------------------------------------------
# Heads, projections and layouts. The tokens carry four features:
# (state, taste, noun, pronoun), so that the two heads can look for different
# things: head 0 compares state and taste, head 1 lets the pronoun find nouns.

FEAT = collections.OrderedDict([
    ("cat", [2, 2, 1, 0]),
    ("milk", [1, 3, 1, 0]),
    ("it", [2, 2, 0, 1]),
    ("sweet", [0, 4, 0, 0]),
    ("hungry", [4, 0, 0, 0]),
])
W_Q = [[1, 0, 0, 0],
       [0, 1, 0, 0],
       [0, 0, 0, 0],
       [0, 0, 2, 2]]
W_K = [[1, 0, 0, 0],
       [0, 1, 0, 0],
       [0, 0, 1, 1],
       [0, 0, 0, 0]]
W_V = [[1, 0, 0, 0],
       [0, 1, 0, 0],
       [0, 0, 1, 0],
       [0, 0, 0, 1]]


def per_head(wm, H=2):
    """[in][H·d] -> [H][in][d]."""
    t = T(wm)
    return t.reshape(t.shape[0], H, -1).permute(1, 0, 2)


def heads():
    X = rows(FEAT, SWEET)
    o, w = G.mha(T(X), T(X), T(X), 4, 2, T(W_Q), T(W_K), T(W_V))
    example(
        "heads_projections", "2 heads with whole projections W_q, W_k, W_v [in][h·d] (math "
        "layout)",
        "Words carry (state, taste, noun, pronoun). Q = X·W_q, K = X·W_k, V = X·W_v with "
        "[4][4] weights whose columns are head 0's two then head 1's two. Head 0 projects "
        "(state, taste) and behaves like the blog post's sweet example with d_k = 2. Head 1: W_q sends "
        "'pronoun' to (2, 2) and W_k sends 'noun' to (1, 1), so only it has a non-zero query "
        "and its score for each noun is 4/√2: it gives " + f3(w[1, 2, 0]) + " each to cat and "
        "milk, every other word spreads evenly. W_v is the identity, so head 1's output (last "
        "two columns) says how noun-like and pronoun-like the attended words are.",
        "Vaswani et al. 2017 (multi-head attention); " + SRC_BLOG + ", multi-head section",
        {"X": X, "heads": 2, "labels": SWEET,
         "params": {"W_q": W_Q, "W_k": W_K, "W_v": W_V}}, o, w,
        "torch.nn.MultiheadAttention")

    bq = [[0, 0], [0.5, 0.5]]
    bk = [[1, 0], [0, 0]]
    bv = [[0.5, 0.5], [0, 0]]
    # Per-head oracle, the way the attention library computes heads: one bmm per head.
    Xt = T(X)
    outs, ws = [], []
    for h in range(2):
        q = Xt @ per_head(W_Q)[h] + T(bq[h])
        k = Xt @ per_head(W_K)[h] + T(bk[h])
        v = Xt @ per_head(W_V)[h] + T(bv[h])
        wh = torch.softmax(q @ k.T / math.sqrt(2), dim=-1)
        outs.append(wh @ v)
        ws.append(wh)
    o, w = torch.cat(outs, dim=-1), torch.stack(ws)
    o2, w2 = G.mha(Xt, Xt, Xt, 4, 2, T(W_Q), T(W_K), T(W_V), T(bq).reshape(-1),
                   T(bk).reshape(-1), T(bv).reshape(-1))
    assert G.close(o, o2) and G.close(w, w2), "per-head loop and MHA disagree"
    example(
        "heads_per_head", "per-head weights [heads][in][d_head] with biases [heads][d_head]",
        "The model of heads_projections.json written one head at a time, as the attention library's "
        "MultiHeadAttention stores it (w_qs [n_head][d_input][d_k]), plus biases. b_q of head "
        "1 is (0.5, 0.5): now every query looks a little for nouns (in head 1 cat gives " +
        f3(w[1, 0, 0]) + " each to cat and milk, " + f3(w[1, 0, 2]) + " each to it and sweet). b_k of head 0 is (1, 0): it adds "
        "q_i·b_k to every score of row i, the same for every key, so it changes no weight. "
        "b_v of head 0 is (0.5, 0.5): the weights sum to 1, so it adds 0.5 to head 0's outputs.",
        SRC_LIBRARY + ", MultiHeadAttention (per-head w_qs, w_ks, w_vs)",
        {"X": X, "heads": 2, "labels": SWEET,
         "params": collections.OrderedDict([
             ("W_q", per_head(W_Q)), ("b_q", bq), ("W_k", per_head(W_K)), ("b_k", bk),
             ("W_v", per_head(W_V)), ("b_v", bv)])},
        o, w, "one softmax(Q_h·K_hᵀ/√2)·V_h per head, checked against nn.MultiheadAttention")

    # the attention library's MultiHeadAttention itself: variant dot (temper = 1), W_o + b_o.
    Xb = [rows(FEAT, SWEET), rows(FEAT, HUNGRY)]
    wo = [[1, 0, 0.5, 0],
          [0, 1, 0, 0.5],
          [0, 0, 0.5, 0],
          [0, 0, 0, 0.5]]
    bo = [0, 0, 0, 0.25]
    m = LibraryMultiHeadAttention(n_head=2, d_input=4, d_model=4, dropout=0.1).eval()
    with torch.no_grad():
        m.w_qs.copy_(per_head(W_Q))
        m.w_ks.copy_(per_head(W_K))
        m.w_vs.copy_(per_head(W_V))
        m.proj.linear.weight.copy_(T(wo).T)
        m.proj.linear.bias.copy_(T(bo))
        o, attns = m(T(Xb), T(Xb), T(Xb), attn_mask=torch.zeros(2, 4, 4, dtype=torch.bool))
    w = attns.reshape(2, 2, 4, 4).transpose(0, 1)  # (n_head·mb) -> [mb][n_head]
    example(
        "heads_output_projection", "the attention library's MultiHeadAttention: per-head weights, no scaling, W_o and "
        "b_o",
        "The attention library's module keeps per-head weights [n_head][d_input][d_k], scores with its "
        "DotProductAttention whose temper is 1 (so variant dot: no √d_k), concatenates the "
        "heads and applies proj, an nn.Linear: W_o [h·d_v][d_model] and b_o. The weights are "
        "those of heads_projections.json; the batch holds the sweet sentence and the hungry "
        "one (hungry = (4, 0, 0, 0)). W_o passes head 0's (state, taste) through as the first "
        "two output columns and makes the last two the mean of the two heads' outputs; b_o "
        "adds 0.25 to the last column. Weights are "
        "[batch][heads][q][k].",
        SRC_LIBRARY + ", MultiHeadAttention",
        {"variant": "dot", "X": Xb, "heads": 2, "labels": ["cat", "milk", "it", "sweet/hungry"],
         "params": collections.OrderedDict([
             ("W_q", per_head(W_Q)), ("W_k", per_head(W_K)), ("W_v", per_head(W_V)),
             ("W_o", wo), ("b_o", bo)])},
        o, w, "the attention library's MultiHeadAttention module")

    # params_layout torch: the numbers as a state_dict holds them.
    in_proj = torch.cat([T(W_Q).T, T(W_K).T, T(W_V).T])
    mha = nn.MultiheadAttention(4, 2, batch_first=True).eval()
    state = collections.OrderedDict([
        ("in_proj_weight", in_proj), ("in_proj_bias", torch.zeros(12)),
        ("out_proj.weight", torch.eye(4)), ("out_proj.bias", torch.zeros(4))])
    mha.load_state_dict(state)
    with torch.no_grad():
        o, w = mha(T(X)[None], T(X)[None], T(X)[None], need_weights=True,
                   average_attn_weights=False)
    o, w = o[0], w[0]
    example(
        "torch_layout", "params_layout torch: weights [out][in] as in a PyTorch state_dict",
        "The model of heads_projections.json as nn.MultiheadAttention(4, 2).state_dict() "
        "holds it: W_q, W_k, W_v are the three [4][4] row blocks of in_proj_weight and W_o is "
        "out_proj.weight, each [out][in] (Q = X·W_qᵀ). params_layout torch transposes the last "
        "two axes of every weight matrix; vectors and biases stay as they are. The output "
        "equals heads_projections.json's.",
        "PyTorch nn.MultiheadAttention / nn.Linear weight layout; " + SRC_CROSS,
        {"X": X, "heads": 2, "labels": SWEET, "params_layout": "torch",
         "params": collections.OrderedDict([
             ("W_q", in_proj[0:4]), ("W_k", in_proj[4:8]), ("W_v", in_proj[8:12]),
             ("b_q", [0, 0, 0, 0]), ("W_o", torch.eye(4)), ("b_o", [0, 0, 0, 0])])},
        o, w, "nn.MultiheadAttention loaded with load_state_dict from the document's numbers")

    # 4D Q/K/V.
    Q4 = [[rows(WORDS2, SWEET), rows(WORDS2, HUNGRY)]]
    q4 = T(Q4)
    w = torch.softmax(q4 @ q4.transpose(-1, -2) / math.sqrt(2), dim=-1)
    o = w @ q4
    example(
        "qkv_4d", "4D Q, K, V [batch][heads][len][dim], as F.scaled_dot_product_attention takes "
        "them",
        "Q = K = V of shape [1][2][4][2]: head 0 holds the sweet sentence, head 1 the hungry "
        "one, as (state, taste). Each head is scored on its own with d_k = 2, and the output "
        "stays 4D [batch][heads][q][d_v] (heads are not concatenated, as in SDPA). V is absent, "
        "so V = K. heads may be omitted: it is read from the head axis. it attends cat and milk "
        "equally in both heads; the last word keeps " + f3(w[0, 0, 3, 3]) + " (sweet) and " +
        f3(w[0, 1, 3, 3]) + " (hungry).",
        SRC_BLOG + "; PyTorch scaled_dot_product_attention's 4D layout",
        {"Q": Q4, "K": Q4, "labels": ["cat", "milk", "it", "sweet/hungry"]}, o, w,
        "torch matmul and softmax on 4D tensors")

    # Cross-attention, the cross-attention tutorial's module.
    Xq = [rows(FEAT, ["it", "hungry"])]
    Yc = [rows(FEAT, ["cat", "milk", "sweet"])]
    bo = [0.5, 0.5, 0.5, 0.5]
    m = TutorialCrossAttention(embed_dim=4, hidden_dim=2, num_heads=2).eval()
    with torch.no_grad():
        m.query_proj.weight.copy_(T(W_Q).T)
        m.key_proj.weight.copy_(T(W_K).T)
        m.value_proj.weight.copy_(T(W_V).T)
        m.out_proj.weight.copy_(torch.eye(4))
        for lin in (m.query_proj, m.key_proj, m.value_proj):
            lin.bias.zero_()
        m.out_proj.bias.copy_(T(bo))
        o, w = m(T(Xq), T(Yc))
    example(
        "cross_attention", "cross-attention with W_q, W_k, W_v, W_o, b_o: queries from X, keys "
        "and values from Y",
        "The cross-attention tutorial's CrossAttention with embed_dim 4, 2 heads of hidden_dim 2: the query "
        "sequence X (it, hungry = (4, 0, 0, 0)) attends over the context Y (cat, milk, sweet). "
        "Q = X·W_q, K = Y·W_k, V = Y·W_v with the projections of heads_projections.json. In "
        "head 0 (state, taste) it scores 8, 8, 8 and stays undecided, hungry scores 8, 4, 0 "
        "and gives " + f3(w[0, 0, 1, 0]) + " to cat; in head 1 it finds the nouns cat and milk "
        "(" + f3(w[0, 1, 0, 0]) + " each) and hungry, with a zero query there, spreads evenly. "
        "The heads are concatenated and out_proj applied: W_o "
        "the identity, b_o = 0.5 added to every output number. The output has X's shape "
        "[1][2][4], the weights are [batch][heads][len_x][len_y] = [1][2][2][3].",
        SRC_CROSS + "; Vaswani et al. 2017 (encoder-decoder attention)",
        {"X": Xq, "Y": Yc, "heads": 2,
         "labels": {"queries": ["it", "hungry"], "keys": ["cat", "milk", "sweet"]},
         "params": collections.OrderedDict([
             ("W_q", W_Q), ("W_k", W_K), ("W_v", W_V), ("W_o", torch.eye(4)), ("b_o", bo)])},
        o, w, "the cross-attention tutorial's CrossAttention module")

    # V absent: V = K.
    Qv = [WORDS2["it"]]
    Kv = rows(WORDS2, ["cat", "milk", "sweet"])
    o, w = d2l_scaled_dot(Qv, Kv, Kv)
    example(
        "v_absent", "qkv mode without V: the keys are also the values (V = K)",
        "Q holds one query, it (2, 2); K holds cat (2, 2), milk (1, 3), sweet (0, 4) and there "
        "is no V, so V = K and the output is a blend of the key vectors: (" +
        ", ".join(f3(x) for x in o[0]) + "). Scores 8, 8, 8 are equal, so it averages the "
        "three keys.",
        SRC_BLOG + "; " + SRC_SHAPES,
        {"Q": Qv, "K": Kv, "labels": {"queries": ["it"], "keys": ["cat", "milk", "sweet"]}},
        o, w, "d2l DotProductAttention with values = keys")

    # Dropout.
    X = rows(WORDS4, SWEET)
    p, seed = 0.5, 7
    w = torch.softmax(T(X) @ T(X).T / 2, dim=-1)
    keep = G.dropout_keep(seed, 1, 1, 4, 4, p)[0, 0]
    dropped = torch.where(keep, w / (1 - p), torch.zeros_like(w))
    o = dropped @ T(X)
    example(
        "dropout", "dropout 0.5 with seed 7: inverted dropout on the weights",
        "scaled_dot.json with dropout p = 0.5: each weight is kept with probability 1 − p and "
        "then multiplied by 1/(1 − p) = 2, or set to 0, before the weights meet V (nn.Dropout in "
        "training mode, as in the attention library's and d2l's modules). The weights reported are those "
        "before dropout; the cells kept (query: keys) are " +
        "; ".join(SWEET[i] + ": " + ",".join(SWEET[j] for j in range(4) if keep[i, j])
                  for i in range(4)) + ". attn's generator is its own (SplitMix64 of the seed "
        "and the cell's index), so seed 7 gives these numbers on every platform, but not "
        "PyTorch's.",
        SRC_LIBRARY + " and " + SRC_D2L + " (nn.Dropout on the attention weights)",
        {"X": X, "dropout": p, "seed": seed, "labels": SWEET}, o, w,
        "softmax weights times a keep mask from attn's documented generator re-implemented in "
        "Python (make_golden.dropout_keep), scaled by 1/(1-p)")


def main():
    variants()
    scalings()
    heads()
    write_all()


if __name__ == "__main__":
    main()
