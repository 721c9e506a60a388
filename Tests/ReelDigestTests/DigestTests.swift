import Foundation
import ReelDigest
import Testing

@Suite("MD5")
struct MD5Tests {
    /// RFC 1321, appendix A.5.
    @Test(arguments: [
        ("", "d41d8cd98f00b204e9800998ecf8427e"),
        ("a", "0cc175b9c0f1b6a831c399e269772661"),
        ("abc", "900150983cd24fb0d6963f7d28e17f72"),
        ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
        ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
        ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f"),
        (String(repeating: "1234567890", count: 8), "57edf4a22be3c955ac49da2e2107b67a"),
    ])
    func theRFC1321TestSuite(_ input: String, _ digest: String) {
        #expect(MD5.hex(of: Data(input.utf8)) == digest)
        #expect(MD5.hex(of: Array(input.utf8)) == digest)
    }

    @Test func bytesFedInPiecesHashLikeAtOnce() {
        let bytes = Data((0..<200_000).map { UInt8(($0 * 7 + 3) % 251) })
        var md5 = MD5()
        var offset = 0
        var piece = 1
        while offset < bytes.count {
            let end = min(bytes.count, offset + piece)
            md5.update(bytes.subdata(in: offset..<end))
            offset = end
            piece = piece * 3 + 1
        }
        #expect(md5.finalize() == "40f3587844b8c6bce33ce9248a561ebb")
        #expect(MD5.hex(of: bytes) == "40f3587844b8c6bce33ce9248a561ebb")
    }

    @Test func finalizeStartsOverAndResetForgets() {
        var md5 = MD5()
        md5.update(Data("abc".utf8))
        #expect(md5.finalize() == "900150983cd24fb0d6963f7d28e17f72")
        md5.update(Data("junk".utf8))
        md5.reset()
        md5.update(Data("a".utf8))
        #expect(md5.finalize() == "0cc175b9c0f1b6a831c399e269772661")
        md5.update(Data())
        #expect(md5.finalize() == "d41d8cd98f00b204e9800998ecf8427e")
    }

    @Test func aDataSliceThatDoesNotStartAtZero() {
        let sliced = (Data([0xFF]) + Data("abc".utf8)).dropFirst()
        #expect(MD5.hex(of: sliced) == "900150983cd24fb0d6963f7d28e17f72")
    }

    /// A copy is a fork: each goes on from the shared prefix by itself.
    @Test func aCopyGoesOnByItself() {
        var first = MD5()
        first.update(Data("message ".utf8))
        var second = first
        first.update(Data("digest".utf8))
        second.update(Data("digest".utf8))
        #expect(first.finalize() == "f96b697d7cb7938d525a2f31aaf161d0")
        #expect(second.finalize() == "f96b697d7cb7938d525a2f31aaf161d0")
        var third = MD5()
        third.update(Data("a".utf8))
        var fourth = third
        fourth.update(Data("bc".utf8))
        #expect(third.finalize() == "0cc175b9c0f1b6a831c399e269772661")
        #expect(fourth.finalize() == "900150983cd24fb0d6963f7d28e17f72")
    }
}

@Suite("SHA-256")
struct SHA256Tests {
    /// FIPS 180-4 examples (NIST's SHA-256 example values).
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ])
    func knownDigests(_ input: String, _ expected: String) {
        #expect(SHA256.hex(of: Data(input.utf8)) == expected)
    }

    @Test func aMillionAsInPieces() {
        let expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        #expect(SHA256.hex(of: Data(repeating: UInt8(ascii: "a"), count: 1_000_000)) == expected)
        var sha = SHA256()
        for _ in 0..<1000 { sha.update(Data(repeating: UInt8(ascii: "a"), count: 999)) }
        sha.update(Data(repeating: UInt8(ascii: "a"), count: 1000))
        #expect(sha.finalize() == expected)
        #expect(sha.finalize() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }
}
