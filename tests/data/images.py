"""Images for the image-reader tests (tests/test_image_reader.sh, tests/test_gpu_images.sh).

  images.py png PATH W H VALUES...   an 8-bit PNG: 3 values a pixel (RGB), row by row, or 1 (gray)
  images.py classes                  three classes of 12 x 10 images (the class's channel
                                     bright, with noise): tr0..tr239.png listed in train.txt,
                                     te0..te59.png in test.txt, in the current directory
  images.py regr DIR N PREFIX        N images of 32 x 32 in random colours (with noise) in
                                     DIR, listed in DIR/PREFIX_map.txt (a class each) and
                                     their channels' means / 255 (red, green, blue) in
                                     DIR/PREFIX_regrLabels.txt, as CNTK's CIFAR-10 script
                                     writes them for its regression example
"""
import os
import random
import struct
import sys
import zlib


def png(path, w, h, vals):
    c = len(vals) // (w * h)
    raw = b''.join(b'\0' + bytes(vals[(y * w) * c:(y * w + w) * c]) for y in range(h))

    def chunk(t, d):
        return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
    head = struct.pack('>IIBBBBB', w, h, 8, 2 if c == 3 else 0, 0, 0, 0)
    with open(path, 'wb') as f:
        f.write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', head) + chunk(b'IDAT', zlib.compress(raw)) +
                chunk(b'IEND', b''))


def classes(prefix, n, seed, mapfile):
    rnd, lines = random.Random(seed), []
    for i in range(n):
        c = rnd.randrange(3)
        vals = [min(255, max(0, (200 if k == c else 40) + rnd.randrange(-50, 50)))
                for _ in range(12 * 10) for k in range(3)]
        png('%s%d.png' % (prefix, i), 12, 10, vals)
        lines.append('%s%d.png\t%d' % (prefix, i, c))
    with open(mapfile, 'w') as f:
        f.write('\n'.join(lines) + '\n')


def regr(d, n, prefix, seed):
    rnd = random.Random(seed)
    with open('%s/%s_map.txt' % (d, prefix), 'w') as m, \
            open('%s/%s_regrLabels.txt' % (d, prefix), 'w') as g:
        for i in range(n):
            base = [rnd.randrange(256) for _ in range(3)]
            vals = [min(255, max(0, base[k] + rnd.randrange(-20, 21)))
                    for _ in range(32 * 32) for k in range(3)]
            path = '%s/%s%d.png' % (d, prefix, i)
            png(path, 32, 32, vals)
            m.write('%s\t%d\n' % (os.path.abspath(path), i % 10))
            mean = [sum(vals[k::3]) / (32 * 32 * 255.0) for k in range(3)]
            g.write('|regrLabels\t%f\t%f\t%f\n' % tuple(mean))


if __name__ == '__main__':
    if sys.argv[1:2] == ['png']:
        png(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), [int(v) for v in sys.argv[5:]])
    elif sys.argv[1:2] == ['regr']:
        regr(sys.argv[2], int(sys.argv[3]), sys.argv[4], 3 if sys.argv[4] == 'train' else 4)
    elif sys.argv[1:2] == ['classes']:
        classes('tr', 240, 1, 'train.txt')
        classes('te', 60, 2, 'test.txt')
    else:
        sys.exit(__doc__)
