import Testing
@testable import ReelTestSupport
