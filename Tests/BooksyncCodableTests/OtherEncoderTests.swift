import BooksyncCodable
import BooksyncCore
import Foundation
import Testing

/// `GeoPoint` and `DocumentReference` are ordinary `Codable` values to other
/// encoders, so a DTO can also go through `JSONEncoder`.
@Suite struct OtherEncoderTests {
    struct Place: Codable, Equatable {
        var point: GeoPoint
        var ref: DocumentReference
    }

    @Test func jsonEncoderSeesPlainValues() throws {
        let place = Place(point: GeoPoint(latitude: 1.5, longitude: -2), ref: DocumentReference(path: "authors/x"))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(place), as: UTF8.self)
        #expect(json == #"{"point":{"latitude":1.5,"longitude":-2},"ref":"authors\/x"}"#)
        #expect(try JSONDecoder().decode(Place.self, from: Data(json.utf8)) == place)
    }

    @Test func timestampIsItsRFC3339TextToJSON() throws {
        let json = String(decoding: try JSONEncoder().encode([Timestamp.maximum]), as: UTF8.self)
        #expect(json == #"["9999-12-31T23:59:59.999999Z"]"#)
        #expect(try JSONDecoder().decode([Timestamp].self, from: Data(json.utf8)) == [.maximum])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([Timestamp].self, from: Data(#"["1965"]"#.utf8)) }
    }
}
