from referee.bench import main

main()
