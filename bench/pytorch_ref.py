#!/usr/bin/python3
"""Reference training throughput of PyTorch (Debian's python3-torch) on Fashion-MNIST.

    /usr/bin/python3 bench/pytorch_ref.py mlp|lstm|conv [MINIBATCHES [SEGMENTS]]

Trains the same networks as configs/fashion-mlp.cfg / fashion-lstm.cfg /
fashion-conv-bs.cfg (CNTK's 02_OneConv) on the same values
(pixels/255 to 4 significant digits, as scripts/idx2ctf writes them), one thread, momentum
SGD, and prints one line:  model samples_per_second peak_rss_kib seconds minibatches
Data loading is outside the timed region; the first 5 minibatches are warm-up. With
SEGMENTS (default 1) the MINIBATCHES are timed that many times in a row and the rate is the
median of the segments' rates (as bench/train_vs_pytorch.py takes the median of partrain's
epochs), so that a burst of load on a shared host moves one segment, not the result."""
import resource
import statistics
import sys
import time

import torch

import benchlib

torch.set_num_threads(1)
torch.manual_seed(1)


def load():
    x, y = benchlib.load_fashion("train")
    return torch.from_numpy(x), torch.from_numpy(y)


class LSTMNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(28, 128, batch_first=True)
        self.out = torch.nn.Linear(128, 10, bias=False)

    def forward(self, x):
        h, _ = self.lstm(x.view(-1, 28, 28))
        return self.out(h[:, -1, :])


class ConvNet(torch.nn.Module):
    """fashion-conv-bs.cfg: ConvolutionalLayer {16, (5:5), pad = true} : ReLU :
    MaxPoolingLayer {(2:2), stride = (2:2)} : DenseLayer {64} : ReLU : LinearLayer {10}"""
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 16, 5, padding=2)
        self.pool = torch.nn.MaxPool2d(2, 2)
        self.hidden = torch.nn.Linear(16 * 14 * 14, 64)
        self.out = torch.nn.Linear(64, 10)

    def forward(self, x):
        h = self.pool(torch.relu(self.conv(x.view(-1, 1, 28, 28))))
        return self.out(torch.relu(self.hidden(h.flatten(1))))


def main():
    model_name = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    segments = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    x, y = load()
    if model_name == "mlp":
        net = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(),
                                  torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                  torch.nn.Linear(512, 10))
        batch, lr_per_sample = 256, 0.004
        momentum = 0.9
    elif model_name == "conv":  # momentumAsTimeConstant = 0: no momentum
        net, batch, lr_per_sample, momentum = ConvNet(), 64, 0.001, 0.0
    else:
        net, batch, lr_per_sample, momentum = LSTMNet(), 128, 0.02, 0.9
    # CNTK's unit-gain momentum with per-sample rates on summed gradients equals PyTorch's
    # SGD on mean gradients with lr = lr_per_sample * batch * (1 - momentum)
    opt = torch.optim.SGD(net.parameters(), lr=lr_per_sample * batch * (1 - momentum),
                          momentum=momentum)
    loss_fn = torch.nn.CrossEntropyLoss()
    perm = torch.randperm(x.shape[0])
    warm = 5
    start = None
    rates, secs = [], 0.0
    for step in range(steps * segments + warm):
        if step >= warm and (step - warm) % steps == 0:
            now = time.perf_counter()
            if start is not None:
                rates.append(steps * batch / (now - start))
                secs += now - start
            start = now
        idx = perm[(step * batch) % (x.shape[0] - batch):][:batch]
        opt.zero_grad()
        loss = loss_fn(net(x[idx]), y[idx])
        loss.backward()
        opt.step()
    now = time.perf_counter()
    rates.append(steps * batch / (now - start))
    secs += now - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{model_name} {statistics.median(rates):.1f} {rss} {secs:.3f} {steps * segments}")


if __name__ == "__main__":
    main()
