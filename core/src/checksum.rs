//! CRC-32C, the one checksum of the crate: the wire format's frame trailer and the device
//! state's records both use it. It sits below both, so neither imports the other for it.

const CRC32C: crc::Crc<u32, crc::NoTable> = crc::Crc::<u32, crc::NoTable>::new(&crc::CRC_32_ISCSI);

/// CRC-32C (Castagnoli; "CRC-32/ISCSI": reflected polynomial `0x82F63B78`, init and xorout
/// `0xFFFFFFFF`) of `bytes`.
///
/// ```
/// assert_eq!(ldp_core::checksum::crc32c(b"123456789"), 0xE306_9283);
/// ```
pub fn crc32c(bytes: &[u8]) -> u32 {
    CRC32C.checksum(bytes)
}
