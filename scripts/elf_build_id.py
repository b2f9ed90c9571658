#!/usr/bin/env python3
"""Rewrites an ELF64 file's GNU build id as a hash of the file itself.

    python3 scripts/elf_build_id.py FILE...

scripts/release removes the `.swift_modhash` sections after linking (swiftc
writes a 16-byte hash into each object for its own incremental builds; it
differs from compile to compile, and nothing reads it at run time). The
linker's build id hashed them too, so it is computed again here: SHA-1 of the
file with the id zeroed, the same kind of id `ld --build-id=sha1` writes, and
the same for two builds of one commit.
"""
import hashlib
import struct
import sys


def restamp(path):
    with open(path, "rb") as file:
        data = bytearray(file.read())
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        sys.exit(f"{path}: not a little-endian ELF64 file")
    section_offset = struct.unpack_from("<Q", data, 0x28)[0]
    entry_size, count, names_index = struct.unpack_from("<HHH", data, 0x3A)

    def section(index):
        name, _, _, _, offset, size = struct.unpack_from("<IIQQQQ", data, section_offset + index * entry_size)
        return name, offset, size

    _, names, _ = section(names_index)
    for index in range(count):
        name, offset, _ = section(index)
        if data[names + name:data.index(b"\0", names + name)] != b".note.gnu.build-id":
            continue
        name_size, id_size, note_type = struct.unpack_from("<III", data, offset)
        if note_type != 3 or data[offset + 12:offset + 12 + name_size] != b"GNU\0" or not 0 < id_size <= 32:
            sys.exit(f"{path}: .note.gnu.build-id is not a GNU build id note of at most 32 bytes")
        start = offset + 12 + ((name_size + 3) & ~3)
        data[start:start + id_size] = bytes(id_size)
        digest = hashlib.sha1(data).digest() if id_size <= 20 else hashlib.sha256(data).digest()
        data[start:start + id_size] = digest[:id_size]
        with open(path, "wb") as file:
            file.write(data)
        return
    sys.exit(f"{path}: no .note.gnu.build-id section")


for argument in sys.argv[1:]:
    restamp(argument)
