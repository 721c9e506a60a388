#!/usr/bin/env python3
"""Byte-level makers for the corpus's audio cases that no encoder writes as such (used by
scripts/corpus-generate.sh; python3 standard library only).

    corpus-audio.py dsf OUT.dsf                       a DSD64 stereo DSF: 1 kHz left, 1.5 kHz right
    corpus-audio.py ogg-setup-pages IN.ogg OUT.ogg N  a Vorbis setup header over pages of N segments
    corpus-audio.py adif IN.aac OUT.aac               ADTS AAC LC (stereo, 44.1 kHz) rewrapped as ADIF
    corpus-audio.py m4b-no-samples IN.m4b OUT.m4b     an M4B cut after its moov, a 169022 s duration

Each writes OUT and prints nothing; a malformed input stops it with an assertion.
"""
import math
import struct
import sys


def dsf(out):
    """DSD64 (2.8224 MHz, 1 bit) stereo, 0.5 s: a 1 kHz tone left and 1.5 kHz right at half scale
    through a second-order sigma-delta modulator. DSF layout: 'DSD ', 'fmt ' and 'data' chunks,
    little endian; the data in blocks of 4096 bytes per channel, channel after channel, each byte
    least significant bit first (bits per sample 1)."""
    rate, count, block = 2_822_400, 1_411_200, 4096

    def modulate(frequency):
        bits = bytearray((count + 7) // 8)
        first = second = 0.0
        y = 1.0
        step = 2 * math.pi * frequency / rate
        for n in range(count):
            first += 0.5 * math.sin(step * n) - y
            second += first - y
            y = 1.0 if second >= 0 else -1.0
            if y > 0:
                bits[n >> 3] |= 1 << (n & 7)
        return bits

    channels = [modulate(1000), modulate(1500)]
    data = bytearray()
    for start in range(0, len(channels[0]), block):
        for channel in channels:
            piece = channel[start:start + block]
            data += piece + bytes(block - len(piece))
    fmt = struct.pack('<4sQIIIIIIQII', b'fmt ', 52, 1, 0, 2, 2, rate, 1, count, block, 0)
    total = 28 + len(fmt) + 12 + len(data)
    with open(out, 'wb') as f:
        f.write(struct.pack('<4sQQQ', b'DSD ', 28, total, 0) + fmt + struct.pack('<4sQ', b'data', 12 + len(data)) + data)


def ogg_crc(page):
    crc = 0
    for byte in page:
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x80000000 else (crc << 1)
            crc &= 0xFFFFFFFF
    return crc


def ogg_setup_pages(source, out, per_page):
    """Rewrites an Ogg Vorbis file so that its setup header (the third header packet) spans
    pages of at most `per_page` lacing values, as writers do for a large codebook: the first
    page continues on the next ones (flag 1), and a page on which no packet ends has granule -1.
    The identification header keeps its page, the comment header gets one of its own, the audio
    pages are copied; every page is renumbered and its CRC computed anew."""
    data = open(source, 'rb').read()
    pages, pos = [], 0
    while pos < len(data):
        assert data[pos:pos + 4] == b'OggS', 'not an Ogg page'
        flags, granule, serial = struct.unpack('<BqI', data[pos + 5:pos + 18])
        count = data[pos + 26]
        lacing = list(data[pos + 27:pos + 27 + count])
        body = data[pos + 27 + count:pos + 27 + count + sum(lacing)]
        pages.append((flags, granule, serial, lacing, body))
        pos += 27 + count + sum(lacing)
    assert sum(1 for v in pages[0][3] if v < 255) == 1, 'the first page holds more than the identification header'
    packets, current, last_header_page = [], b'', None
    for index, (_, _, _, lacing, body) in enumerate(pages):
        at = 0
        for value in lacing:
            current += body[at:at + value]
            at += value
            if value < 255:
                packets.append(current)
                current = b''
        if len(packets) >= 3:
            last_header_page = index
            break
    assert len(packets) == 3 and current == b'', 'the headers do not end a page'
    serial = pages[0][2]

    def page(flags, granule, sequence, lacing, body):
        raw = bytearray(struct.pack('<4sBBqIIIB', b'OggS', 0, flags, granule, serial, sequence, 0, len(lacing)))
        raw += bytes(lacing) + body
        struct.pack_into('<I', raw, 22, ogg_crc(raw))
        return bytes(raw)

    def lace(packet):
        return [255] * (len(packet) // 255) + [len(packet) % 255]

    written = [page(pages[0][0], pages[0][1], 0, pages[0][3], pages[0][4]), page(0, 0, 1, lace(packets[1]), packets[1])]
    setup, values, at = packets[2], lace(packets[2]), 0
    assert len(values) > 2 * per_page, 'the setup header fits on two pages'
    while values:
        chunk, values = values[:per_page], values[per_page:]
        continued = 1 if at else 0
        written.append(page(continued, 0 if not values else -1, len(written), chunk, setup[at:at + sum(chunk)]))
        at += sum(chunk)
    for flags, granule, _, lacing, body in pages[last_header_page + 1:]:
        written.append(page(flags, granule, len(written), lacing, body))
    with open(out, 'wb') as f:
        f.write(b''.join(written))


class Bits:
    def __init__(self):
        self.value, self.count = 0, 0

    def put(self, width, value):
        self.value = (self.value << width) | value
        self.count += width

    def bytes(self):
        self.put((8 - self.count % 8) % 8, 0)
        return self.value.to_bytes(self.count // 8, 'big')


def adif(source, out):
    """AAC in ADIF (ISO/IEC 14496-3, 1.A.2.1): the ADIF header, variable rate, with one program
    config element (AAC LC, 44.1 kHz, one channel pair), then the raw data blocks of an ADTS
    stream with their ADTS headers taken off. ADIF has no framing: a reader needs the AAC
    decoder itself to find where a block ends."""
    adts = open(source, 'rb').read()
    blocks, pos = [], 0
    while pos + 7 <= len(adts):
        assert adts[pos] == 0xFF and adts[pos + 1] & 0xF0 == 0xF0, 'not ADTS'
        assert (adts[pos + 2] >> 2) & 0xF == 4 and (adts[pos + 2] >> 6) == 1, 'not AAC LC at 44.1 kHz'
        length = ((adts[pos + 3] & 3) << 11) | (adts[pos + 4] << 3) | (adts[pos + 5] >> 5)
        blocks.append(adts[pos + (7 if adts[pos + 1] & 1 else 9):pos + length])
        pos += length
    b = Bits()
    b.put(32, int.from_bytes(b'ADIF', 'big'))
    b.put(1, 0)        # copyright_id_present
    b.put(1, 0)        # original_copy
    b.put(1, 0)        # home
    b.put(1, 1)        # bitstream_type: variable rate (no adif_buffer_fullness)
    b.put(23, 128000)  # bitrate
    b.put(4, 0)        # num_program_config_elements - 1
    b.put(4, 0)        # program_config_element: element_instance_tag
    b.put(2, 1)        # object_type: AAC LC
    b.put(4, 4)        # sampling_frequency_index: 44100
    for width, value in ((4, 1), (4, 0), (4, 0), (2, 0), (3, 0), (4, 0)):   # front, side, back, lfe, data, cc
        b.put(width, value)
    b.put(3, 0)        # no mono, stereo or matrix mixdown
    b.put(1, 1)        # front element 0 is a channel pair
    b.put(4, 0)        # with tag 0
    header = b.bytes() + bytes([0])   # byte alignment, then comment_field_bytes = 0
    with open(out, 'wb') as f:
        f.write(header + b''.join(blocks))


def m4b_no_samples(source, out):
    """The M4B cut right after its moov (no mdat: every sample its tables name is missing), and
    the movie header's duration set to 169022 s, as tag-editing test files are: the tracks, the
    chapters (Nero `chpl` and the chapter track) and the cover stay readable; nothing decodes."""
    data = open(source, 'rb').read()
    pos = 0
    while pos + 8 <= len(data):
        size, kind = struct.unpack('>I4s', data[pos:pos + 8])
        assert size >= 8, 'a box of size 0 or 1'
        if kind == b'moov':
            break
        pos += size
    else:
        raise AssertionError('no moov')
    moov = bytearray(data[:pos + size])
    assert b'chpl' in moov, 'no Nero chapters'
    mvhd = moov.find(b'mvhd', pos) - 4
    assert moov[mvhd + 8] == 0, 'a version 1 mvhd'
    timescale = struct.unpack('>I', moov[mvhd + 20:mvhd + 24])[0]
    struct.pack_into('>I', moov, mvhd + 24, 169022 * timescale)
    with open(out, 'wb') as f:
        f.write(moov)


def main():
    commands = {'dsf': (dsf, 1), 'ogg-setup-pages': (ogg_setup_pages, 3), 'adif': (adif, 2),
                'm4b-no-samples': (m4b_no_samples, 2)}
    if len(sys.argv) < 2 or sys.argv[1] not in commands or len(sys.argv) - 2 != commands[sys.argv[1]][1]:
        print('\n'.join(__doc__.strip().splitlines()[3:7]), file=sys.stderr)
        return 2
    function, _ = commands[sys.argv[1]]
    arguments = sys.argv[2:]
    if sys.argv[1] == 'ogg-setup-pages':
        arguments[2] = int(arguments[2])
    function(*arguments)
    return 0


if __name__ == '__main__':
    sys.exit(main())
