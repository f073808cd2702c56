"""EfficientNet-Lite0 in PyTorch, loaded from dedog's own model file: the peer network for benchmarks and
experiments (same weights, TF-SAME padding as explicit zero Pad before stride-2 convolutions, BN eps 1e-3).
`LiteNet` builds the other Lite variants at any input size from the file's shapes."""
import torch
import torch.nn as nn
from safetensors.torch import load_file

# (kernel, stride, expand, in, out, repeats): the same table as BlockArguments.lite0.
TABLE = [(3, 1, 1, 32, 16, 1), (3, 2, 6, 16, 24, 2), (5, 2, 6, 24, 40, 2), (3, 2, 6, 40, 80, 3),
         (5, 1, 6, 80, 112, 3), (5, 2, 6, 112, 192, 4), (3, 1, 6, 192, 320, 1)]


class ConvBN(nn.Sequential):
    def __init__(self, cin, cout, k, stride, groups=1, act=True):
        pad = (0, 1, 0, 1) if (stride == 2 and k == 3) else (1, 2, 1, 2) if stride == 2 else None
        layers = [nn.ZeroPad2d(pad)] if pad else []
        layers += [nn.Conv2d(cin, cout, k, stride, 0 if pad else k // 2, groups=groups, bias=False),
                   nn.BatchNorm2d(cout, eps=1e-3)]
        if act:
            layers.append(nn.ReLU6())
        super().__init__(*layers)


class Block(nn.Module):
    def __init__(self, k, s, e, cin, cout):
        super().__init__()
        mid = cin * e
        self.expand = ConvBN(cin, mid, 1, 1) if e != 1 else None
        self.dw = ConvBN(mid, mid, k, s, groups=mid)
        self.project = ConvBN(mid, cout, 1, 1, act=False)
        self.residual = s == 1 and cin == cout

    def forward(self, x):
        y = self.project(self.dw(self.expand(x) if self.expand is not None else x))
        return x + y if self.residual else y


class Lite0(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = ConvBN(3, 32, 3, 2)
        blocks = []
        for k, s, e, cin, cout, r in TABLE:
            for i in range(r):
                blocks.append(Block(k, s if i == 0 else 1, e, cin if i == 0 else cout, cout))
        self.blocks = nn.Sequential(*blocks)
        self.head = ConvBN(320, 1280, 1, 1)
        self.fc = nn.Linear(1280, 1000)

    def forward(self, x):
        x = self.head(self.blocks(self.stem(x)))
        return self.fc(x.mean((2, 3)))


def load(net, model_file):
    w = {k: v.float() for k, v in load_file(str(model_file)).items()}  # F16 weights (Lite1, Lite2) widened
    def conv_bn(mod, conv, bn):
        c, b = [m for m in mod if isinstance(m, nn.Conv2d)][0], [m for m in mod if isinstance(m, nn.BatchNorm2d)][0]
        c.weight.data = w[conv]
        b.weight.data, b.bias.data = w[bn + ".weight"], w[bn + ".bias"]
        b.running_mean.data, b.running_var.data = w[bn + ".running_mean"], w[bn + ".running_var"]
    conv_bn(net.stem, "_conv_stem.weight", "_bn0")
    for i, blk in enumerate(net.blocks):
        p = f"_blocks.{i}."
        if blk.expand is not None:
            conv_bn(blk.expand, p + "_expand_conv.weight", p + "_bn0")
        conv_bn(blk.dw, p + "_depthwise_conv.weight", p + "_bn1")
        conv_bn(blk.project, p + "_project_conv.weight", p + "_bn2")
    conv_bn(net.head, "_conv_head.weight", "_bn1")
    net.fc.weight.data, net.fc.bias.data = w["_fc.weight"], w["_fc.bias"]
    return net.eval()


# The first block of each stage strides by this much (EfficientNet-Lite's table; the others stride by 1).
STAGE_STRIDES = [1, 2, 2, 2, 1, 2, 1]


def same_pad(n, k, s):
    """TF-SAME padding of a k×k, stride-s convolution on n pixels: (before, after) and the output size."""
    out = -(-n // s)
    total = max((out - 1) * s + k - n, 0)
    return (total // 2, total - total // 2), out


class PaddedConvBN(nn.Sequential):
    """ConvBN with TF-SAME padding for an input of n × n pixels, as an explicit zero Pad (ONNX exports need it)."""
    def __init__(self, cin, cout, k, stride, n, groups=1, act=True):
        (before, after), self.out = same_pad(n, k, stride)
        layers = [nn.ZeroPad2d((before, after, before, after))] if before or after else []
        layers += [nn.Conv2d(cin, cout, k, stride, 0, groups=groups, bias=False), nn.BatchNorm2d(cout, eps=1e-3)]
        if act:
            layers.append(nn.ReLU6())
        super().__init__(*layers)


class PaddedBlock(Block):
    def __init__(self, k, s, e, cin, cout, n):
        nn.Module.__init__(self)
        mid = cin * e
        self.expand = PaddedConvBN(cin, mid, 1, 1, n) if e != 1 else None
        self.dw = PaddedConvBN(mid, mid, k, s, n, groups=mid)
        self.project = PaddedConvBN(mid, cout, 1, 1, self.dw.out, act=False)
        self.residual = s == 1 and cin == cout
        self.out = self.dw.out


class LiteNet(Lite0):
    """Any EfficientNet-Lite (Lite0…Lite4) for square inputs of `size` pixels, its block table read from the shapes
    in a dedog model file (channels, kernel, expansion; a stage starts where the output channels change)."""
    def __init__(self, model_file, size):
        nn.Module.__init__(self)
        w = load_file(str(model_file))
        count = 1 + max(int(k.split(".")[1]) for k in w if k.startswith("_blocks."))
        self.stem = PaddedConvBN(3, w["_conv_stem.weight"].shape[0], 3, 2, size)
        n, stage, previous, blocks = self.stem.out, -1, None, []
        for i in range(count):
            p = f"_blocks.{i}."
            project = w[p + "_project_conv.weight"]
            cout, mid, k = project.shape[0], project.shape[1], w[p + "_depthwise_conv.weight"].shape[2]
            cin = w[p + "_expand_conv.weight"].shape[1] if p + "_expand_conv.weight" in w else mid
            first = cout != previous
            stage += first
            blocks.append(PaddedBlock(k, STAGE_STRIDES[stage] if first else 1, mid // cin, cin, cout, n))
            n, previous = blocks[-1].out, cout
        self.blocks = nn.Sequential(*blocks)
        head = w["_conv_head.weight"]
        self.head = PaddedConvBN(head.shape[1], head.shape[0], 1, 1, n)
        self.fc = nn.Linear(head.shape[0], w["_fc.weight"].shape[0])
