# softmax in PyTorch: the arrays arrive as float64 NumPy arrays, and a tensor may be returned.
import torch


def softmax(x):
    return torch.softmax(torch.from_numpy(x), dim=-1)
