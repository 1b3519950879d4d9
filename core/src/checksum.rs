//! CRC-32C, the one checksum of the crate: the wire format's frame trailer and the device
//! state's records both use it. It sits below both, so neither imports the other for it.

/// Bit by bit on bare metal, where flash is scarce; with a slice-by-16 table (16 KiB) on a
/// hosted build, whose simulated devices and learners' links checksum every frame and state
/// record (a quarter of the in-process privacy audit's time went to the bitwise loop). Both
/// give the same values.
#[cfg(target_os = "none")]
static CRC32C: crc::Crc<u32, crc::NoTable> = crc::Crc::<u32, crc::NoTable>::new(&crc::CRC_32_ISCSI);
#[cfg(not(target_os = "none"))]
static CRC32C: crc::Crc<u32, crc::Table<16>> = crc::Crc::<u32, crc::Table<16>>::new(&crc::CRC_32_ISCSI);

/// CRC-32C (Castagnoli; "CRC-32/ISCSI": reflected polynomial `0x82F63B78`, init and xorout
/// `0xFFFFFFFF`) of `bytes`.
///
/// ```
/// assert_eq!(ldp_core::checksum::crc32c(b"123456789"), 0xE306_9283);
/// ```
pub fn crc32c(bytes: &[u8]) -> u32 {
    CRC32C.checksum(bytes)
}

#[cfg(test)]
mod tests {
    /// The hosted build's table gives the firmware's bitwise values, at every length around the
    /// table's 16-byte stride and its alignment.
    #[test]
    fn the_table_and_the_bitwise_checksum_agree() {
        let bitwise = crc::Crc::<u32, crc::NoTable>::new(&crc::CRC_32_ISCSI);
        let bytes: [u8; 300] =
            core::array::from_fn(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3]);
        for start in 0..17 {
            for end in start..bytes.len() {
                assert_eq!(
                    super::crc32c(&bytes[start..end]),
                    bitwise.checksum(&bytes[start..end]),
                    "{start}..{end}"
                );
            }
        }
    }
}
