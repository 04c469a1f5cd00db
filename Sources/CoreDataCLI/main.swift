print("coredata")
