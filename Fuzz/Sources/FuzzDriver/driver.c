// Only the header: libFuzzer defines the driver.
