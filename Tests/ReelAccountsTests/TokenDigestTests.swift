import Foundation
@testable import ReelAccounts
import Testing

/// What the database keeps of a token is its SHA-256 in lowercase hex, as every Reel before
/// kept it: a database written before still finds its sessions.
@Suite struct TokenDigestTests {
    @Test func theDatabaseKeepsTheTokensSHA256() {
        #expect(AccountsService.tokenHash("abc")
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(AccountsService.tokenHash("") != AccountsService.tokenHash("abc"))
    }
}
