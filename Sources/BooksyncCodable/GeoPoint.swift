import BooksyncCore

/// A point on Earth in degrees: Firestore's geo point, `{"$geopoint": …}` in a
/// record file.
///
/// `RecordEncoder` and `RecordDecoder` map it to `Value.geoPoint` (anything
/// else, e.g. a map with the same two keys, is a type mismatch, so a file
/// keeps the type the app declared). Other encoders see a plain keyed value
/// `{"latitude": …, "longitude": …}`.
public struct GeoPoint: Codable, Hashable, Sendable {
    /// Degrees north of the equator, -90...90.
    public var latitude: Double
    /// Degrees east of Greenwich, -180...180.
    public var longitude: Double

    /// A point; not range-checked here: `RecordEncoder` rejects a point outside
    /// ±90/±180 (or NaN), because a record file could not hold it.
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// True when a record file can hold the point: both coordinates within
    /// their ranges, the same rule the record parser applies to `$geopoint`.
    public var isValid: Bool {
        (-90...90).contains(latitude) && (-180...180).contains(longitude)
    }

    var value: Value { .geoPoint(latitude: latitude, longitude: longitude) }
}
