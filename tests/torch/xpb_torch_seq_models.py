"""PyTorch definitions of AlexNet, the LSTM language models, the Transformer and GPT-2, written
from their published definitions, independently of the xpubench plugins:

  alexnet      torchvision.models.AlexNet (features.N, avgpool, classifier.N)
  lstm         PyTorch's examples/word_language_model RNNModel with Zaremba et al.'s sizes
               (encoder, rnn = nn.LSTM with weight_ih_l0 ..., decoder)
  transformer  base: torch.nn.Transformer itself inside a model with one shared embedding
               (embedding, transformer.*); gpt2-small: Hugging Face's GPT2LMHeadModel layout
               (transformer.wte, transformer.h.N.attn.c_attn, ..., lm_head tied to wte)

Module paths are the parameter names xpubench uses (docs/models.md). Each model's forward pass
adds its FLOPs (multiply-add = 2: linear layers, convolutions, matmuls of the attention, the
LSTM's gates) to a FlopCounter when one is active, by hooks on the modules PyTorch runs and by
explicit counts where the work is a bare matmul. Only torch is needed.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class FlopCounter:
    """Forward FLOPs of the modules it hooks plus what models add through `FlopCounter.add`."""

    active = None

    def __init__(self, model):
        self.total = 0
        self.handles = [m.register_forward_hook(self.hook) for m in model.modules()]

    @classmethod
    def add(cls, flops):
        if cls.active is not None:
            cls.active.total += int(flops)

    def hook(self, m, inp, out):
        if isinstance(m, nn.Conv2d):
            k = m.weight.shape[1] * m.weight.shape[2] * m.weight.shape[3]
            self.total += 2 * out.numel() * k
        elif isinstance(m, (nn.Linear, Conv1D)) and not isinstance(
                m, nn.modules.linear.NonDynamicallyQuantizableLinear):
            self.total += 2 * (inp[0].numel() // inp[0].shape[-1]) * m.weight.numel()
        elif isinstance(m, nn.LSTM):
            t, b = inp[0].shape[0], inp[0].shape[1]
            size = m.input_size
            for _ in range(m.num_layers):
                self.total += 2 * t * b * 4 * m.hidden_size * (size + m.hidden_size)
                size = m.hidden_size
        elif isinstance(m, nn.MultiheadAttention):
            q, k = inp[0], inp[1]  # [S, B, D]: batch_first=False
            d = m.embed_dim
            sq, sk, b = q.shape[0], k.shape[0], q.shape[1]
            self.total += 2 * b * (sq * d * d + 2 * sk * d * d)  # in-projection
            self.total += 2 * 2 * b * sq * sk * d  # q k^T and weights @ v
            self.total += 2 * b * sq * d * d  # out_proj (F.linear inside MHA)

    def __enter__(self):
        FlopCounter.active = self
        return self

    def __exit__(self, *exc):
        FlopCounter.active = None
        for h in self.handles:
            h.remove()


# ---- AlexNet ----

class AlexNet(nn.Module):
    """torchvision.models.AlexNet (torchvision 0.14's source); fc_width is 4096 there."""

    def __init__(self, num_classes=1000, dropout=0.5, fc_width=4096):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=11, stride=4, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(64, 192, kernel_size=5, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(192, 384, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(256, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2))
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout), nn.Linear(256 * 6 * 6, fc_width), nn.ReLU(inplace=True),
            nn.Dropout(p=dropout), nn.Linear(fc_width, fc_width), nn.ReLU(inplace=True),
            nn.Linear(fc_width, num_classes))

    def forward(self, x):
        x = self.avgpool(self.features(x))
        return self.classifier(torch.flatten(x, 1))


# ---- LSTM language model ----

class RNNModel(nn.Module):
    """word_language_model's RNNModel (LSTM, untied), initialised as Zaremba et al.: every
    parameter U(-w, w). forward(tokens[S, B]) -> logits[S, B, V]."""

    def __init__(self, vocab, hidden, layers, dropout, init):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(vocab, hidden)
        self.rnn = nn.LSTM(hidden, hidden, layers, dropout=dropout)
        self.decoder = nn.Linear(hidden, vocab)
        for p in self.parameters():
            nn.init.uniform_(p, -init, init)

    def forward(self, tokens):
        emb = self.drop(self.encoder(tokens))
        out, _ = self.rnn(emb)
        return self.decoder(self.drop(out))


LSTM_VARIANTS = {"ptb-medium": (650, 0.5, 0.05), "ptb-large": (1500, 0.65, 0.04)}


def lstm(variant, vocab=10000, hidden=0, layers=2, dropout=-1.0):
    h, p, init = LSTM_VARIANTS[variant]
    return RNNModel(vocab, hidden or h, layers, p if dropout < 0 else dropout, init)


# ---- Transformer (Vaswani et al. 2017) ----

def sinusoids(s, d):
    """The paper's positions: PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(...)."""
    pos = torch.arange(s, dtype=torch.float64).unsqueeze(1)
    div = torch.pow(10000.0, torch.arange(0, d, 2, dtype=torch.float64) / d)
    pe = torch.zeros(s, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos / div)
    pe[:, 1::2] = torch.cos(pos / div)
    return pe.float()


class Seq2SeqTransformer(nn.Module):
    """torch.nn.Transformer with one embedding shared by source, target and the output
    projection, scaled by sqrt(d), plus sinusoidal positions and dropout.
    forward(src[S, B], tgt[T, B]) -> logits[T, B, V]."""

    def __init__(self, vocab=37000, d=512, heads=8, layers=6, ff=2048, dropout=0.1):
        super().__init__()
        self.d = d
        self.embedding = nn.Embedding(vocab, d)
        nn.init.normal_(self.embedding.weight, 0.0, d ** -0.5)
        self.transformer = nn.Transformer(d, heads, layers, layers, ff, dropout)
        self.drop = nn.Dropout(dropout)

    def embed(self, tokens):
        pe = sinusoids(tokens.shape[0], self.d).unsqueeze(1).to(tokens.device)
        return self.drop(self.embedding(tokens) * math.sqrt(self.d) + pe)

    def forward(self, src, tgt):
        t = tgt.shape[0]
        mask = torch.full((t, t), float("-inf"), device=tgt.device).triu(1)  # causal
        y = self.transformer(self.embed(src), self.embed(tgt), tgt_mask=mask)
        FlopCounter.add(2 * y.numel() * self.embedding.weight.shape[0])
        return F.linear(y, self.embedding.weight)


# ---- GPT-2 (Hugging Face's GPT2LMHeadModel) ----

class Conv1D(nn.Module):
    """transformers.pytorch_utils.Conv1D: weight [nx, nf], y = x @ weight + bias."""

    def __init__(self, nf, nx):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(nx, nf).normal_(0.0, 0.02))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).reshape(
            x.shape[:-1] + (self.weight.shape[1],))


class GPT2Attention(nn.Module):
    def __init__(self, d, heads, dropout):
        super().__init__()
        self.heads, self.d = heads, d
        self.c_attn = Conv1D(3 * d, d)
        self.c_proj = Conv1D(d, d)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.c_attn(x).split(d, dim=2)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d // self.heads)
        causal = torch.ones(s, s, dtype=torch.bool, device=x.device).tril()
        w = w.masked_fill(~causal, torch.finfo(w.dtype).min)
        w = self.attn_dropout(torch.softmax(w, dim=-1))
        y = torch.matmul(w, v).transpose(1, 2).reshape(b, s, d)
        FlopCounter.add(2 * 2 * b * s * s * d)
        return self.resid_dropout(self.c_proj(y))


class GPT2MLP(nn.Module):
    def __init__(self, d, ff, dropout):
        super().__init__()
        self.c_fc = Conv1D(ff, d)
        self.c_proj = Conv1D(d, ff)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(F.gelu(self.c_fc(x), approximate="tanh")))


class GPT2Block(nn.Module):
    def __init__(self, d, heads, ff, dropout):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d, eps=1e-5)
        self.attn = GPT2Attention(d, heads, dropout)
        self.ln_2 = nn.LayerNorm(d, eps=1e-5)
        self.mlp = GPT2MLP(d, ff, dropout)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2Model(nn.Module):
    def __init__(self, vocab, context, d, heads, layers, ff, dropout):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(context, d)
        nn.init.normal_(self.wte.weight, 0.0, 0.02)
        nn.init.normal_(self.wpe.weight, 0.0, 0.02)
        self.drop = nn.Dropout(dropout)
        self.h = nn.ModuleList(GPT2Block(d, heads, ff, dropout) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d, eps=1e-5)
        for name, p in self.named_parameters():  # GPT2PreTrainedModel._init_weights
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * layers))

    def forward(self, tokens):
        pos = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.drop(self.wte(tokens) + self.wpe(pos))
        for block in self.h:
            x = block(x)
        return self.ln_f(x)


class GPT2LMHeadModel(nn.Module):
    """forward(tokens[B, S]) -> logits[B, S, V]; lm_head is transformer.wte (tied)."""

    def __init__(self, vocab=50257, context=1024, d=768, heads=12, layers=12, ff=3072,
                 dropout=0.1):
        super().__init__()
        self.transformer = GPT2Model(vocab, context, d, heads, layers, ff, dropout)

    def forward(self, tokens):
        y = self.transformer(tokens)
        FlopCounter.add(2 * y.numel() * self.transformer.wte.weight.shape[0])
        return F.linear(y, self.transformer.wte.weight)


def transformer(variant, seq_len=0, vocab=0, d_model=0, heads=0, layers=0, d_ff=0, context=0,
                dropout=0.1):
    """The model and its forward arguments at batch 1 (sizes as the plugin's parameters)."""
    gpt2 = variant == "gpt2-small"
    s = seq_len or (1024 if gpt2 else 128)
    d = d_model or (768 if gpt2 else 512)
    kw = dict(vocab=vocab or (50257 if gpt2 else 37000), d=d, heads=heads or (12 if gpt2 else 8),
              layers=layers or (12 if gpt2 else 6), ff=d_ff or 4 * d, dropout=dropout)
    if gpt2:
        return GPT2LMHeadModel(context=context or 1024, **kw), (torch.zeros(1, s, dtype=torch.long),)
    zeros = torch.zeros(s, 1, dtype=torch.long)
    return Seq2SeqTransformer(**kw), (zeros, zeros)


def build(model, variant, **params):
    """(module, forward arguments at batch 1) of a model and variant with plugin parameters."""
    if model == "alexnet":
        size = params.pop("image_size", 224)
        return AlexNet(**params), (torch.zeros(1, 3, size, size),)
    if model == "lstm":
        seq = params.pop("seq_len", 35)
        return lstm(variant, **params), (torch.zeros(seq, 1, dtype=torch.long),)
    if model == "transformer":
        return transformer(variant, **params)
    raise ValueError("unknown model " + model)


def forward_flops(module, args):
    """Forward FLOPs of one pass over `args` (evaluation mode; dropout off), counted from the
    shapes alone: the pass runs on PyTorch's meta device (no data, no arithmetic)."""
    module = module.to("meta").eval()
    args = tuple(a.to("meta") for a in args)
    with FlopCounter(module) as counter, torch.no_grad():
        module(*args)
    return counter.total
